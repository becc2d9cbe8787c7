// How fast a few warps of one thread block move data by loading it from pinned host memory, the
// way NCCL's kernels receive through its SHM transport (a receive is loads from a host buffer and
// stores into device memory). Each lane keeps U 16-byte volatile loads in flight before storing
// them, as NCCL's reduceCopyPacks does (device/common_kernel.h; U = ncclCollUnroll: 4 below sm_80,
// 8 from sm_80, device.h v2.30.7), so a warp has U x 512 B in flight. If such loads are bound by
// their round trip (Little's law), a block's rate is warps x U x 512 B / L and grows with warps
// until a link binds; the implied L is printed beside each rate.
//
//   chase            one thread's dependent 8-byte loads from host memory: the unloaded round trip
//   load W U B       B blocks of W warps loading 64 MiB each from host memory
//   load+store W U B the same while B more blocks of 5 warps store 64 MiB each into host memory
//                    (NCCL's send warps of the same channel: 5 of 10 in v2.30.7 sendrecv.h)
// Prints "case seconds GB/s implied_L_us" lines, each the median of 5 runs.
//
// Build and run: nvcc -O2 -arch=sm_90 -o host_load host_load.cu && ./host_load
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
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

static const size_t PER_BLOCK = 64ull << 20;

__device__ __forceinline__ uint4 ld_volatile(const uint4* p) {
  uint4 v;
  asm volatile("ld.volatile.global.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// Blocks [0, loaders) copy host -> device with U loads a lane in flight; blocks from `loaders`
// copy device -> host (stores into host memory), 5 warps each.
template <int U>
__global__ void copy(const uint4* host_src, uint4* dev_dst, const uint4* dev_src, uint4* host_dst, int loaders,
                     int load_warps) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const size_t n = PER_BLOCK / sizeof(uint4);
  if (blockIdx.x < loaders) {
    if (warp >= load_warps) return;
    const uint4* src = host_src + blockIdx.x * n;
    uint4* dst = dev_dst + blockIdx.x * n;
    const size_t hunk = (size_t)U * 32;
    for (size_t base = (size_t)warp * hunk; base + hunk <= n; base += (size_t)load_warps * hunk) {
      uint4 acc[U];
#pragma unroll
      for (int u = 0; u < U; u++) acc[u] = ld_volatile(src + base + u * 32 + lane);
#pragma unroll
      for (int u = 0; u < U; u++) dst[base + u * 32 + lane] = acc[u];
    }
  } else {
    if (warp >= 5) return;
    const int b = blockIdx.x - loaders;
    const uint4* src = dev_src + b * n;
    uint4* dst = host_dst + b * n;
    const size_t hunk = (size_t)U * 32;
    for (size_t base = (size_t)warp * hunk; base + hunk <= n; base += 5 * hunk) {
      uint4 acc[U];
#pragma unroll
      for (int u = 0; u < U; u++) acc[u] = src[base + u * 32 + lane];
#pragma unroll
      for (int u = 0; u < U; u++) dst[base + u * 32 + lane] = acc[u];
    }
  }
}

__global__ void chase(const uint64_t* next, int hops, uint64_t* out, long long* ns) {
  uint64_t i = 0;
  long long t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  for (int h = 0; h < hops; h++) i = *(volatile const uint64_t*)(next + i);
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  *out = i;
  *ns = t1 - t0;
}

int main() {
  const int max_blocks = 4;
  uint4 *h_src, *h_dst, *d_src, *d_dst;
  CHECK(cudaHostAlloc(&h_src, max_blocks * PER_BLOCK, cudaHostAllocMapped));
  CHECK(cudaHostAlloc(&h_dst, max_blocks * PER_BLOCK, cudaHostAllocMapped));
  CHECK(cudaMalloc(&d_src, max_blocks * PER_BLOCK));
  CHECK(cudaMalloc(&d_dst, max_blocks * PER_BLOCK));
  memset(h_src, 1, max_blocks * PER_BLOCK);
  uint4 *hs, *hd;
  CHECK(cudaHostGetDevicePointer(&hs, h_src, 0));
  CHECK(cudaHostGetDevicePointer(&hd, h_dst, 0));

  // Unloaded round trip: a random cycle through 4096 slots 4 KiB apart in host memory.
  {
    const int slots = 4096, stride = 4096 / 8, hops = 20000;
    uint64_t* h;
    CHECK(cudaHostAlloc(&h, (size_t)slots * stride * 8, cudaHostAllocMapped));
    std::vector<int> order(slots);
    for (int i = 0; i < slots; i++) order[i] = i;
    srand(1);
    for (int i = slots - 1; i > 0; i--) std::swap(order[i], order[rand() % (i + 1)]);
    for (int i = 0; i < slots; i++) h[(size_t)order[i] * stride] = (uint64_t)order[(i + 1) % slots] * stride;
    uint64_t* dh;
    CHECK(cudaHostGetDevicePointer(&dh, h, 0));
    uint64_t* out;
    long long* ns;
    CHECK(cudaMallocManaged(&out, 8));
    CHECK(cudaMallocManaged(&ns, 8));
    std::vector<double> v;
    for (int r = 0; r < 5; r++) {
      chase<<<1, 1>>>(dh, hops, out, ns);
      CHECK(cudaDeviceSynchronize());
      v.push_back(*ns * 1e-9 / hops);
    }
    std::sort(v.begin(), v.end());
    printf("chase %.3e s_per_load\n", v[2]);
  }

  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  auto run = [&](int U, int warps, int blocks, bool store) {
    std::vector<double> v;
    for (int r = 0; r < 5; r++) {
      int grid = blocks * (store ? 2 : 1);
      CHECK(cudaEventRecord(a));
      if (U == 4)
        copy<4><<<grid, 32 * std::max(warps, 5)>>>(hs, d_dst, d_src, hd, blocks, warps);
      else
        copy<8><<<grid, 32 * std::max(warps, 5)>>>(hs, d_dst, d_src, hd, blocks, warps);
      CHECK(cudaEventRecord(b));
      CHECK(cudaEventSynchronize(b));
      float ms;
      CHECK(cudaEventElapsedTime(&ms, a, b));
      v.push_back(ms * 1e-3);
    }
    std::sort(v.begin(), v.end());
    double t = v[2], rate = blocks * PER_BLOCK / t, inflight = (double)blocks * warps * U * 512;
    printf("%s W=%d U=%d B=%d %.4e s %.2f GB/s L=%.2f us\n", store ? "load+store" : "load", warps, U, blocks, t,
           rate / 1e9, inflight / rate * 1e6);
  };
  for (int U : {4, 8})
    for (int blocks : {1, 2})
      for (int w : {1, 2, 4, 7, 8, 15, 16}) run(U, w, blocks, false);
  for (int U : {4, 8})
    for (int blocks : {1, 2})
      for (int w : {2, 4, 7}) run(U, w, blocks, true);
  return 0;
}
