// What one copy costs a GPU's copy engine when no link is in the way, and what an SM kernel
// launch costs, as back-to-back chains in one stream (the way p2pBandwidthLatencyTest and
// nvbandwidth time latency). Separates the engine's own per-copy cost from a link's hop
// latency: a host copy's 1-byte time less the device-local copy's is what the PCIe path adds.
//
//   d2d-<bytes>   cudaMemcpyAsync device to device (copy engine), 1 B .. 1 MiB
//   h2d-1, d2h-1  1-byte host copies (pinned), for the difference
//   kernel-empty  an empty kernel, one block of one thread
// Prints "name seconds_per_operation" lines; each value the median of 15 chains of 200,
// queued behind a closed gate and then released.
//
// Build and run: nvcc -O2 -arch=sm_90 -o engine_latency engine_latency.cu && ./engine_latency
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define CHECK(x)                                                                          \
  do {                                                                                    \
    cudaError_t e_ = (x);                                                                 \
    if (e_ != cudaSuccess) {                                                              \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

__global__ void empty() {}

// Holds the stream until the host has queued the whole chain (as p2pBandwidthLatencyTest's delay
// kernel does), so the host's cost of issuing is not what is timed. Opens by itself after a second.
__global__ void gate(volatile int* open) {
  long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (!*open && t - t0 < 1000000000LL);
}

static volatile int* open_flag;  // pinned and mapped: the host opens the gate through it
static int* open_flag_dev;

// Time per operation of a chain of `n` issues of `op` in stream `s`, median of 15 chains.
static double per_op(const std::function<void()>& op, cudaStream_t s, int n = 200) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<double> t;
  for (int trial = -2; trial < 15; trial++) {
    *open_flag = 0;
    gate<<<1, 1, 0, s>>>(open_flag_dev);
    CHECK(cudaEventRecord(a, s));
    for (int i = 0; i < n; i++) op();
    CHECK(cudaEventRecord(b, s));
    *open_flag = 1;
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    if (trial >= 0) t.push_back(ms * 1e-3 / n);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main() {
  CHECK(cudaSetDeviceFlags(cudaDeviceMapHost));
  int* flag;
  CHECK(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped));
  open_flag = flag;
  CHECK(cudaHostGetDevicePointer((void**)&open_flag_dev, flag, 0));
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  printf("# %s, %d SMs, %d async engines\n", p.name, p.multiProcessorCount, p.asyncEngineCount);
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const size_t MAX = 1 << 20;
  char *d0, *d1, *h;
  CHECK(cudaMalloc(&d0, MAX));
  CHECK(cudaMalloc(&d1, MAX));
  CHECK(cudaHostAlloc(&h, MAX, 0));
  for (size_t b = 1; b <= MAX; b *= 4)
    printf("d2d-%zu %.9f\n", b, per_op([&] { CHECK(cudaMemcpyAsync(d1, d0, b, cudaMemcpyDeviceToDevice, s)); }, s));
  printf("h2d-1 %.9f\n", per_op([&] { CHECK(cudaMemcpyAsync(d0, h, 1, cudaMemcpyHostToDevice, s)); }, s));
  printf("d2h-1 %.9f\n", per_op([&] { CHECK(cudaMemcpyAsync(h, d0, 1, cudaMemcpyDeviceToHost, s)); }, s));
  printf("kernel-empty %.9f\n", per_op([&] { empty<<<1, 1, 0, s>>>(); }, s));
  return 0;
}
