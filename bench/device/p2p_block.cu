// Measures what one thread block moves when it runs two copies at once, as an NCCL p2p channel does:
// its warps split between the channel's send and its receive (device/sendrecv.h: 10 + 9 warps from
// NCCL 2.22, 9 copying in each), each thread loading UNROLL = 8 16-byte words before storing them
// (COLL_UNROLL on sm80 and later). Without registered buffers both copy every byte (the send into
// the connection's FIFO, the receive out of it), so the question is whether the two copies share one
// SM's copy rate (each about half of block_rate.cu's one-block 47 GB/s on H100: contend's rule,
// tuning::P2P_BLOCK_COPY_BW / 2, docs/nccl.md "Send/receive and all-to-all on Hopper and Blackwell")
// or each runs at its own warps' rate. Both copies here are device memory to device memory on one
// GPU (on Hopper and Blackwell NCCL's p2p copies load local memory; the send's stores cross NVLink,
// which one GPU cannot show). Each row is the median of TRIALS kernels after a warm-up.
//
// Output CSV: blocks,send_warps,recv_warps,unroll,bytes_per_group,seconds,send_gbps,recv_gbps,block_gbps
// (send_gbps / recv_gbps: one group's bytes over the time from the kernel's first start to that
// group's last finish, per block; block_gbps: both groups' bytes per block over the kernel's time).
// Build and run (on a machine with a GPU): nvcc -O2 -arch=sm_90 -o p2p_block p2p_block.cu && ./p2p_block out.csv
// Not yet run (round 24 wrote it with no GPU lent).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                          \
  do {                                                                                    \
    cudaError_t e_ = (x);                                                                 \
    if (e_ != cudaSuccess) {                                                              \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

static const int TRIALS = 5;
static const int UNROLL = 8;
static const size_t PER_GROUP = size_t(8) << 20;  // bytes each group of each block copies
static const int MAX_BLOCKS = 32;

__device__ __forceinline__ uint64_t now_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One group's copy of `words` 16-byte words, `threads` threads from `tid`: UNROLL loads, then UNROLL stores.
__device__ __forceinline__ void group_copy(const int4* __restrict__ s, int4* __restrict__ d, size_t words, int tid,
                                           int threads) {
  const size_t step = size_t(threads) * UNROLL;
  for (size_t base = 0; base + step <= words; base += step) {
    int4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) v[u] = s[base + u * threads + tid];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) d[base + u * threads + tid] = v[u];
  }
}

// Warps [0, send_warps) copy a -> b, warps [send_warps, send_warps + recv_warps) copy c -> d, each its
// own PER_GROUP slice of its block. times[4 * block + k]: send start, send end, recv start, recv end
// (the group's first and last warp to start and end, by atomics on the ns timer).
__global__ void two_copies(const int4* a, int4* b, const int4* c, int4* d, int send_warps, int recv_warps,
                           unsigned long long* times) {
  const size_t words = PER_GROUP / sizeof(int4);
  const int warp = threadIdx.x / 32;
  const bool send = warp < send_warps;
  if (!send && warp >= send_warps + recv_warps) return;
  const int tid = send ? threadIdx.x : threadIdx.x - send_warps * 32;
  const int threads = (send ? send_warps : recv_warps) * 32;
  unsigned long long* t = times + 4 * blockIdx.x + (send ? 0 : 2);
  if (threadIdx.x % 32 == 0) atomicMin(t, (unsigned long long)now_ns());
  const size_t off = blockIdx.x * words;
  if (send)
    group_copy(a + off, b + off, words, tid, threads);
  else
    group_copy(c + off, d + off, words, tid, threads);
  __syncwarp();
  if (threadIdx.x % 32 == 0) atomicMax(t + 1, (unsigned long long)now_ns());
}

struct Row {
  double seconds, send_s, recv_s;
};

static Row run(int blocks, int send_warps, int recv_warps, const int4* a, int4* b, const int4* c, int4* d,
               unsigned long long* times) {
  std::vector<unsigned long long> init(4 * MAX_BLOCKS), host(4 * MAX_BLOCKS);
  for (int i = 0; i < MAX_BLOCKS; i++) {
    init[4 * i] = init[4 * i + 2] = ~0ull;
    init[4 * i + 1] = init[4 * i + 3] = 0;
  }
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  std::vector<Row> rows;
  for (int trial = -1; trial < TRIALS; trial++) {
    CHECK(cudaMemcpy(times, init.data(), init.size() * sizeof(init[0]), cudaMemcpyHostToDevice));
    CHECK(cudaEventRecord(e0));
    two_copies<<<blocks, (send_warps + recv_warps) * 32>>>(a, b, c, d, send_warps, recv_warps, times);
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    CHECK(cudaGetLastError());
    float ms;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    CHECK(cudaMemcpy(host.data(), times, host.size() * sizeof(host[0]), cudaMemcpyDeviceToHost));
    unsigned long long first = ~0ull, send_end = 0, recv_end = 0;
    for (int i = 0; i < blocks; i++) {
      if (send_warps) first = std::min(first, host[4 * i]), send_end = std::max(send_end, host[4 * i + 1]);
      if (recv_warps) first = std::min(first, host[4 * i + 2]), recv_end = std::max(recv_end, host[4 * i + 3]);
    }
    Row r{ms * 1e-3, send_warps ? (send_end - first) * 1e-9 : 0.0, recv_warps ? (recv_end - first) * 1e-9 : 0.0};
    if (trial >= 0) rows.push_back(r);
  }
  CHECK(cudaEventDestroy(e0));
  CHECK(cudaEventDestroy(e1));
  std::sort(rows.begin(), rows.end(), [](const Row& x, const Row& y) { return x.seconds < y.seconds; });
  return rows[rows.size() / 2];
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s OUT.csv\n", argv[0]);
    return 2;
  }
  FILE* f = fopen(argv[1], "w");
  if (!f) {
    perror(argv[1]);
    return 2;
  }
  CHECK(cudaSetDevice(0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  fprintf(stderr, "%s, %d SMs\n", prop.name, prop.multiProcessorCount);
  const size_t total = PER_GROUP * MAX_BLOCKS;
  char *a, *b, *c, *d;
  CHECK(cudaMalloc(&a, total));
  CHECK(cudaMalloc(&b, total));
  CHECK(cudaMalloc(&c, total));
  CHECK(cudaMalloc(&d, total));
  CHECK(cudaMemset(a, 1, total));
  CHECK(cudaMemset(c, 2, total));
  unsigned long long* times;
  CHECK(cudaMalloc(&times, 4 * MAX_BLOCKS * sizeof(unsigned long long)));

  // (send warps, receive warps): one copy alone, NCCL's 2.22+ copying warps (9 + 9), its whole split
  // with the send's synchronising warp left idle (10 + 9, here copying: an upper bound), 2.19-2.21's 8 + 8,
  // and one copy of as many warps as both (18).
  const int splits[][2] = {{9, 0}, {18, 0}, {8, 8}, {9, 9}, {10, 9}};
  const int blocks[] = {1, 2, 4, 8, 16, 32};
  fprintf(f, "blocks,send_warps,recv_warps,unroll,bytes_per_group,seconds,send_gbps,recv_gbps,block_gbps\n");
  for (auto& s : splits)
    for (int n : blocks) {
      Row r = run(n, s[0], s[1], (const int4*)a, (int4*)b, (const int4*)c, (int4*)d, times);
      double g = double(PER_GROUP);
      double send = s[0] ? g / r.send_s * 1e-9 : 0.0, recv = s[1] ? g / r.recv_s * 1e-9 : 0.0;
      double block = g * ((s[0] > 0) + (s[1] > 0)) / r.seconds * 1e-9;
      fprintf(f, "%d,%d,%d,%d,%.0f,%.9f,%.3f,%.3f,%.3f\n", n, s[0], s[1], UNROLL, g, r.seconds, send, recv, block);
      fprintf(stderr, "blocks %2d send %2d recv %2d  %8.3f ms  send %7.2f recv %7.2f block %7.2f GB/s\n", n, s[0],
              s[1], r.seconds * 1e3, send, recv, block);
    }
  fclose(f);
  return 0;
}
