// Measures one GPU's host link carrying both directions at once, the way NCCL's send/receive through
// host memory (SHM) uses it: the GPU's SMs store one connection's data into pinned host memory (posted
// writes, GPU -> host) while they load another's out of it (non-posted reads: requests GPU -> host,
// completions host -> GPU). Each direction alone, then both at once on two streams; the same for the
// copy engines (cudaMemcpyAsync H2D and D2H on two streams) for comparison.
// Question it answers: how much of the GPU -> host direction do a read's requests take? If the link's
// GPU -> host bytes are write data plus r bytes of request per byte read, a write's rate drops from W
// alone to about W - r * R_together when R bytes/s are read at the same time; r is printed per mechanism.
//
// Each case runs with the host side's window the whole transfer and 4 MiB (an SHM buffer's size), three
// times over, alternating. On an H100 (2026-11-27) the SMs' loads from a 4 MiB window were served from the
// GPU's L2 after the first pass (up to 420 GB/s): only the whole-window SM rows measure the link.
// Output CSV: rep,mechanism,window,mode,direction,bytes,seconds,gbps  (mode: alone | together)
// Build and run (on a machine with a GPU): nvcc -O2 -arch=sm_90 -o host_duplex host_duplex.cu && ./host_duplex out.csv
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

static const int TRIALS = 7;
static const int UNROLL = 4;
static const int BLOCKS = 32;   // per direction: enough to fill a Gen5 x16 link either way (block_rate.cu)
static const int THREADS = 512;  // 16 warps

// Grid-stride copy, UNROLL 16-byte words a thread in flight (loads before stores, as NCCL's prims do).
// The host side's index wraps at its window (a power of two, in words): NCCL's SHM connection reuses
// a buffer of a few MiB, so a long transfer touches the same host pages again and again.
__global__ void copy(const int4* __restrict__ src, int4* __restrict__ dst, size_t words, size_t smask, size_t dmask) {
  const size_t stride = size_t(gridDim.x) * blockDim.x * UNROLL;
  for (size_t base = size_t(blockIdx.x) * blockDim.x * UNROLL; base + blockDim.x * UNROLL <= words; base += stride) {
    int4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) v[u] = src[(base + u * blockDim.x + threadIdx.x) & smask];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) dst[(base + u * blockDim.x + threadIdx.x) & dmask] = v[u];
  }
}

struct Job {
  const char* direction;
  const void* src;
  void* dst;
  size_t bytes;
  size_t window;  // bytes of the host side reused (a power of two); the device side is contiguous
  bool host_src;
};

// Runs one or two jobs, each on its own stream, started together; returns each one's seconds.
static std::vector<double> run(bool sm, const std::vector<Job>& jobs) {
  std::vector<cudaStream_t> s(jobs.size());
  std::vector<cudaEvent_t> a(jobs.size()), b(jobs.size());
  for (size_t i = 0; i < jobs.size(); i++) {
    CHECK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&a[i]));
    CHECK(cudaEventCreate(&b[i]));
  }
  std::vector<std::vector<double>> t(jobs.size());
  for (int trial = -1; trial < TRIALS; trial++) {
    CHECK(cudaDeviceSynchronize());
    for (size_t i = 0; i < jobs.size(); i++) {
      CHECK(cudaEventRecord(a[i], s[i]));
      const Job& j = jobs[i];
      size_t all = ~size_t(0), wmask = j.window / 16 - 1;
      if (sm) {
        copy<<<BLOCKS, THREADS, 0, s[i]>>>((const int4*)j.src, (int4*)j.dst, j.bytes / 16, j.host_src ? wmask : all,
                                           j.host_src ? all : wmask);
      } else {
        for (size_t off = 0; off < j.bytes; off += j.window) {
          size_t n = std::min(j.window, j.bytes - off);
          const char* src = (const char*)j.src + (j.host_src ? 0 : off);
          char* dst = (char*)j.dst + (j.host_src ? off : 0);
          CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, s[i]));
        }
      }
      CHECK(cudaEventRecord(b[i], s[i]));
    }
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaGetLastError());
    for (size_t i = 0; i < jobs.size(); i++) {
      float ms;
      CHECK(cudaEventElapsedTime(&ms, a[i], b[i]));
      if (trial >= 0) t[i].push_back(ms * 1e-3);
    }
  }
  std::vector<double> med;
  for (auto& v : t) {
    std::sort(v.begin(), v.end());
    med.push_back(v[v.size() / 2]);
  }
  for (size_t i = 0; i < jobs.size(); i++) {
    CHECK(cudaStreamDestroy(s[i]));
    CHECK(cudaEventDestroy(a[i]));
    CHECK(cudaEventDestroy(b[i]));
  }
  return med;
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
  fprintf(stderr, "%s, %d SMs, PCI %02x:%02x\n", prop.name, prop.multiProcessorCount, prop.pciBusID, prop.pciDeviceID);

  const size_t max_bytes = size_t(1) << 30;
  char *host_r, *host_w, *dev_r, *dev_w;
  CHECK(cudaHostAlloc(&host_r, max_bytes, cudaHostAllocMapped));
  CHECK(cudaHostAlloc(&host_w, max_bytes, cudaHostAllocMapped));
  memset(host_r, 1, max_bytes);
  memset(host_w, 2, max_bytes);
  CHECK(cudaMalloc(&dev_r, max_bytes));
  CHECK(cudaMalloc(&dev_w, max_bytes));
  CHECK(cudaMemset(dev_r, 3, max_bytes));
  CHECK(cudaMemset(dev_w, 4, max_bytes));
  char *hr, *hw;
  CHECK(cudaHostGetDevicePointer((void**)&hr, host_r, 0));
  CHECK(cudaHostGetDevicePointer((void**)&hw, host_w, 0));

  fprintf(f, "rep,mechanism,window,mode,direction,bytes,seconds,gbps\n");
  const size_t sizes[] = {size_t(16) << 20, size_t(64) << 20, size_t(256) << 20};
  for (int rep = 1; rep <= 3; rep++)
  for (int sm = 1; sm >= 0; sm--)
  for (int whole = 1; whole >= 0; whole--) {
    const char* mech = sm ? "sm" : "ce";
    for (size_t bytes : sizes) {
      size_t window = whole ? max_bytes : size_t(4) << 20;
      // read: host -> GPU (the GPU loads, or the engine copies H2D); write: GPU -> host.
      Job rd = {"read", sm ? (const void*)hr : (const void*)host_r, dev_r, bytes, window, true};
      Job wr = {"write", dev_w, sm ? (void*)hw : (void*)host_w, bytes, window, false};
      double tr = run(sm, {rd})[0], tw = run(sm, {wr})[0];
      // Together: size the write so both would take the same time alone, so they overlap throughout.
      Job wr2 = wr;
      wr2.bytes = std::min(max_bytes, size_t(double(bytes) * tr / tw) / 4096 * 4096);
      std::vector<double> both = run(sm, {rd, wr2});
      struct Row {
        const char* mode;
        const Job& j;
        double s;
      } rows[] = {{"alone", rd, tr}, {"alone", wr, tw}, {"together", rd, both[0]}, {"together", wr2, both[1]}};
      for (auto& r : rows) {
        double gbps = double(r.j.bytes) / r.s * 1e-9;
        fprintf(f, "%d,%s,%zu,%s,%s,%zu,%.9f,%.3f\n", rep, mech, window, r.mode, r.j.direction, r.j.bytes, r.s, gbps);
      }
      double r_alone = double(rd.bytes) / tr, w_alone = double(wr.bytes) / tw;
      double r_both = double(rd.bytes) / both[0], w_both = double(wr2.bytes) / both[1];
      fprintf(stderr, "rep %d %s window %4zu MiB, %3zu MiB: write %5.1f alone %5.1f together, read %5.1f alone %5.1f together (GB/s); write drops %.1f%%, read drops %.1f%%; request bytes per byte read r = %.3f\n", rep, mech,
              window >> 20, bytes >> 20, w_alone * 1e-9, w_both * 1e-9, r_alone * 1e-9, r_both * 1e-9, 100 * (1 - w_both / w_alone), 100 * (1 - r_both / r_alone), (w_alone - w_both) / r_both);
    }
  }
  fclose(f);
  return 0;
}
