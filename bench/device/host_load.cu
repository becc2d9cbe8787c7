// How fast a few warps of one thread block move data by loading it from pinned host memory, the
// way NCCL's kernels receive through its SHM transport (a receive is loads from a host buffer and
// stores into device memory). Each lane keeps U 16-byte volatile loads in flight before storing
// them, as NCCL's reduceCopyPacks does (device/common_kernel.h; U = ncclCollUnroll: 4 below sm_80,
// 8 from sm_80, device.h v2.30.7), so a warp has U x 512 B in flight. If such loads are bound by
// their round trip (Little's law), a block's rate is warps x U x 512 B / L and grows with warps
// until a link binds; the implied L is printed beside each rate.
//
//   chase                 one thread's dependent 8-byte loads from host memory (a random cycle
//                         of 4096 slots 4 KiB apart): the unloaded round trip, three runs
//   load U B W            B blocks of W warps, each block loading 64 MiB from host memory
//   load+store U B W      the same while B more blocks of 5 warps each store 64 MiB into host
//                         memory (NCCL's send warps beside a receive: 5 of 10, sendrecv.h v2.30.7)
// Each rate is the median of 5 runs. bench/validation/data/h100-host-load.txt is its output.
//
// Build and run: nvcc -O2 -arch=sm_90 -o host_load host_load.cu && ./host_load
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#define N (64ull << 20)

__device__ uint4 ldv(const uint4* p) {
  uint4 v;
  asm volatile("ld.volatile.global.v4.u32 {%0,%1,%2,%3},[%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// Blocks [0, L) copy host -> device with W warps; blocks from L copy device -> host with 5.
template <int U>
__global__ void k(const uint4* hs, uint4* dd, const uint4* ds, uint4* hd, int L, int W) {
  int l = threadIdx.x % 32, w = threadIdx.x / 32;
  size_t n = N / 16, h = U * 32;
  bool ld = blockIdx.x < L;
  int b = ld ? blockIdx.x : blockIdx.x - L, ww = ld ? W : 5;
  if (w >= ww) return;
  const uint4* s = (ld ? hs : ds) + b * n;
  uint4* d = (ld ? dd : hd) + b * n;
  for (size_t o = w * h; o + h <= n; o += ww * h) {
    uint4 a[U];
#pragma unroll
    for (int u = 0; u < U; u++) a[u] = ld ? ldv(s + o + u * 32 + l) : s[o + u * 32 + l];
#pragma unroll
    for (int u = 0; u < U; u++) d[o + u * 32 + l] = a[u];
  }
}

__global__ void c(const unsigned long long* x, int n, unsigned long long* o, long long* t) {
  unsigned long long i = 0;
  long long a, b;
  asm volatile("mov.u64 %0,%%globaltimer;" : "=l"(a));
  for (int j = 0; j < n; j++) i = *(volatile const unsigned long long*)(x + i);
  asm volatile("mov.u64 %0,%%globaltimer;" : "=l"(b));
  *o = i;
  *t = b - a;
}

int main() {
  uint4 *hs, *hd, *ds, *dd, *a, *b;
  cudaHostAlloc(&hs, 4 * N, 1);
  cudaHostAlloc(&hd, 4 * N, 1);
  cudaMalloc(&ds, 4 * N);
  cudaMalloc(&dd, 4 * N);
  memset(hs, 1, 4 * N);
  cudaHostGetDevicePointer(&a, hs, 0);
  cudaHostGetDevicePointer(&b, hd, 0);
  {
    int S = 4096, st = 512, H = 20000;
    unsigned long long *h, *dh, *o;
    long long* t;
    cudaHostAlloc(&h, (size_t)S * st * 8, 1);
    std::vector<int> r(S);
    for (int i = 0; i < S; i++) r[i] = i;
    srand(1);
    for (int i = S - 1; i > 0; i--) std::swap(r[i], r[rand() % (i + 1)]);
    for (int i = 0; i < S; i++) h[(size_t)r[i] * st] = (unsigned long long)r[(i + 1) % S] * st;
    cudaHostGetDevicePointer(&dh, h, 0);
    cudaMallocManaged(&o, 8);
    cudaMallocManaged(&t, 8);
    for (int q = 0; q < 3; q++) {
      c<<<1, 1>>>(dh, H, o, t);
      cudaDeviceSynchronize();
      printf("chase %.3f us\n", *t * 1e-3 / H);
    }
  }
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (int st = 0; st < 2; st++)
    for (int U : {4, 8})
      for (int B : {1, 2})
        for (int W : {1, 2, 4, 7, 8, 15, 16}) {
          if (st && W > 8) continue;
          std::vector<float> v;
          for (int r = 0; r < 5; r++) {
            cudaEventRecord(e0);
            int g = B * (st ? 2 : 1), th = 32 * std::max(W, 5);
            if (U == 4)
              k<4><<<g, th>>>(a, dd, ds, b, B, W);
            else
              k<8><<<g, th>>>(a, dd, ds, b, B, W);
            cudaEventRecord(e1);
            cudaEventSynchronize(e1);
            float ms;
            cudaEventElapsedTime(&ms, e0, e1);
            v.push_back(ms);
          }
          std::sort(v.begin(), v.end());
          double R = B * N / (v[2] * 1e-3);
          printf("%s U=%d B=%d W=%d %.2f GB/s L=%.2f us\n", st ? "load+store" : "load", U, B, W, R / 1e9,
                 B * W * U * 512.0 / R * 1e6);
        }
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}
