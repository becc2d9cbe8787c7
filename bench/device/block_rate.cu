// Measures what one thread block moves per second when it copies the way NCCL's kernels do: each
// of its threads loads UNROLL 16-byte words, then stores them (prims_simple.h's copy loop shape),
// the block being one NCCL channel. Swept over warps per block, words in flight per thread and
// blocks, for three paths of one GPU:
//   d2d    device memory to device memory (HBM both ends)
//   read   mapped pinned host memory to device memory (SM loads across PCIe: non-posted reads)
//   write  device memory to mapped pinned host memory (SM stores across PCIe: posted writes)
// Question it answers: is a channel's rate over a link set by its bytes in flight over the
// link's round trip (Little's law: warps x 32 x 16 B x UNROLL / latency) until the link or memory
// caps it? Each row is the median of TRIALS kernels after a warm-up.
//
// Output CSV: path,blocks,warps,unroll,bytes,seconds,gbps
// Build and run (on a machine with a GPU): nvcc -O2 -arch=sm_90 -o block_rate block_rate.cu && ./block_rate out.csv
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
static const size_t PER_BLOCK = size_t(8) << 20;  // bytes each block copies
static const int MAX_BLOCKS = 32;

// Each block copies its own PER_BLOCK-byte slice; a thread handles UNROLL words per iteration,
// all loads issued before any store, so UNROLL x 16 B per thread are in flight on the load side.
template <int UNROLL>
__global__ void copy(const int4* __restrict__ src, int4* __restrict__ dst, size_t words_per_block) {
  const int4* s = src + blockIdx.x * words_per_block;
  int4* d = dst + blockIdx.x * words_per_block;
  const size_t step = size_t(blockDim.x) * UNROLL;
  for (size_t base = 0; base + step <= words_per_block; base += step) {
    int4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) v[u] = s[base + u * blockDim.x + threadIdx.x];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) d[base + u * blockDim.x + threadIdx.x] = v[u];
  }
}

static void launch(int unroll, int blocks, int threads, const int4* src, int4* dst, size_t words) {
  switch (unroll) {
    case 1: copy<1><<<blocks, threads>>>(src, dst, words); break;
    case 4: copy<4><<<blocks, threads>>>(src, dst, words); break;
    case 8: copy<8><<<blocks, threads>>>(src, dst, words); break;
    default: fprintf(stderr, "unroll %d not built\n", unroll); exit(2);
  }
}

static double seconds(int unroll, int blocks, int threads, const int4* src, int4* dst) {
  size_t words = PER_BLOCK / sizeof(int4);
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<double> t;
  for (int trial = -1; trial < TRIALS; trial++) {
    CHECK(cudaEventRecord(a));
    launch(unroll, blocks, threads, src, dst, words);
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    CHECK(cudaGetLastError());
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    if (trial >= 0) t.push_back(ms * 1e-3);
  }
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
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
  CHECK(cudaSetDeviceFlags(cudaDeviceMapHost));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  fprintf(stderr, "%s, %d SMs, PCI %02x:%02x\n", prop.name, prop.multiProcessorCount, prop.pciBusID,
          prop.pciDeviceID);

  const size_t total = PER_BLOCK * MAX_BLOCKS;
  char *host, *dev_a, *dev_b;
  CHECK(cudaHostAlloc(&host, total, cudaHostAllocMapped));
  memset(host, 1, total);
  CHECK(cudaMalloc(&dev_a, total));
  CHECK(cudaMalloc(&dev_b, total));
  CHECK(cudaMemset(dev_a, 2, total));
  CHECK(cudaMemset(dev_b, 3, total));
  char* host_dev;
  CHECK(cudaHostGetDevicePointer((void**)&host_dev, host, 0));

  struct Path {
    const char* name;
    const char* src;
    char* dst;
  };
  Path paths[] = {{"d2d", dev_a, dev_b}, {"read", host_dev, dev_b}, {"write", dev_a, host_dev}};
  const int warps[] = {1, 2, 4, 8, 16, 20};
  const int unrolls[] = {1, 4, 8};
  const int blocks[] = {1, 2, 4, 8, 16, 32};

  fprintf(f, "path,blocks,warps,unroll,bytes,seconds,gbps\n");
  for (auto& p : paths)
    for (int u : unrolls)
      for (int w : warps)
        for (int b : blocks) {
          double s = seconds(u, b, w * 32, (const int4*)p.src, (int4*)p.dst);
          double bytes = double(PER_BLOCK) * b;
          fprintf(f, "%s,%d,%d,%d,%.0f,%.9f,%.3f\n", p.name, b, w, u, bytes, s, bytes / s * 1e-9);
          fprintf(stderr, "%-5s blocks %2d warps %2d unroll %d  %8.3f ms  %8.2f GB/s\n", p.name, b, w, u, s * 1e3,
                  bytes / s * 1e-9);
        }
  fclose(f);
  return 0;
}
