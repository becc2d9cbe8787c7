// Measures one GPU's link to its host memory the way contend's calibrate reads measurements:
// a CSV of patterns (pattern,src,dst,size,time,access; the transfers of a pattern start
// together, each row its own time from that common start). Device names are those of
// bench/validation/machines/h100-host.yaml (GPU0, MEM0).
//
//   sweep-h2d-<bytes>, sweep-d2h-<bytes>  one copy-engine copy, 1 B … 1 GiB: time per copy of a
//                                         chain of back-to-back copies in one stream (as
//                                         p2pBandwidthLatencyTest and nvbandwidth time them)
//   <name>                                 several copies started together on their own streams,
//                                         each timed from the common start to its own end
// Host-to-device rows say `access: read`: the GPU's copy engine pulls host memory (PCIe read
// requests out, completions back), where device-to-host copies are posted writes. Every value is
// the median of TRIALS runs after a warm-up. Host buffers are pinned (cudaHostAlloc) and touched
// on the calling thread, so they sit on its NUMA node. A kernel loading from and storing to
// mapped host memory (zero-copy, not a copy engine) is timed too, for the log only.
//
// Build and run (on a machine with a GPU): nvcc -O2 -o hostlink hostlink.cu && ./hostlink out.csv
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(x)                                                                          \
  do {                                                                                    \
    cudaError_t e_ = (x);                                                                 \
    if (e_ != cudaSuccess) {                                                              \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

static const int TRIALS = 15;
static const size_t MAX_BYTES = size_t(1) << 30;

struct Copy {
  bool h2d;       // host to device (else device to host)
  size_t bytes;
};

struct Buffers {
  std::vector<char*> host, dev;
};

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Holds a stream until the host has queued everything behind it (as p2pBandwidthLatencyTest's
// delay kernel does), so that the host's time to issue copies is not measured. Opens by itself
// after a second, should the host ever block while queuing.
__global__ void gate(volatile int* open) {
  long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (!*open && t - t0 < 1000000000LL);
}

static volatile int* open_flag;  // pinned, host side
static int* open_flag_dev;       // the same word, as the GPU sees it

static void close_gate(cudaStream_t s) {
  *open_flag = 0;
  gate<<<1, 1, 0, s>>>(open_flag_dev);
  CHECK(cudaGetLastError());
}

__global__ void sm_read(const int4* __restrict__ src, size_t n, int4* sink) {
  int4 acc = make_int4(0, 0, 0, 0);
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    int4 v = src[i];
    acc.x ^= v.x; acc.y ^= v.y; acc.z ^= v.z; acc.w ^= v.w;
  }
  if (acc.x == 0x7fffffff && acc.y == 0x12345) *sink = acc;  // keeps the loads
}

__global__ void sm_write(int4* dst, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    dst[i] = make_int4(int(i), 1, 2, 3);
}

// Times per copy of `reps` back-to-back copies in one stream, median over trials.
static double chain(const Copy& c, char* h, char* d, cudaStream_t s) {
  size_t reps = std::max<size_t>(3, std::min<size_t>(100, (size_t(256) << 20) / c.bytes));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<double> t;
  for (int trial = -1; trial < TRIALS; trial++) {
    close_gate(s);
    CHECK(cudaEventRecord(a, s));
    for (size_t r = 0; r < reps; r++)
      CHECK(cudaMemcpyAsync(c.h2d ? d : h, c.h2d ? h : d, c.bytes, c.h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, s));
    CHECK(cudaEventRecord(b, s));
    *open_flag = 1;
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    if (trial >= 0) t.push_back(ms * 1e-3 / reps);
  }
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  return median(t);
}

// Starts every copy at once, each on its own stream behind a gate; returns each one's time
// from the gate's end to its own end (median over trials).
static std::vector<double> together(const std::vector<Copy>& cs, Buffers& buf, std::vector<cudaStream_t>& st) {
  size_t n = cs.size();
  cudaEvent_t go;
  std::vector<cudaEvent_t> end(n);
  CHECK(cudaEventCreate(&go));
  for (auto& e : end) CHECK(cudaEventCreate(&e));
  std::vector<std::vector<double>> t(n);
  for (int trial = -1; trial < TRIALS; trial++) {
    close_gate(st[0]);
    CHECK(cudaEventRecord(go, st[0]));
    for (size_t i = 0; i < n; i++) {
      if (i > 0) CHECK(cudaStreamWaitEvent(st[i], go, 0));
      const Copy& c = cs[i];
      CHECK(cudaMemcpyAsync(c.h2d ? buf.dev[i] : buf.host[i], c.h2d ? buf.host[i] : buf.dev[i], c.bytes,
                            c.h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, st[i]));
      CHECK(cudaEventRecord(end[i], st[i]));
    }
    *open_flag = 1;
    for (size_t i = 0; i < n; i++) {
      CHECK(cudaEventSynchronize(end[i]));
      float ms;
      CHECK(cudaEventElapsedTime(&ms, go, end[i]));
      if (trial >= 0) t[i].push_back(ms * 1e-3);
    }
  }
  std::vector<double> out;
  for (auto& v : t) out.push_back(median(v));
  CHECK(cudaEventDestroy(go));
  for (auto& e : end) CHECK(cudaEventDestroy(e));
  return out;
}

static double kernel_seconds(bool read, int4* host_mapped, size_t bytes, int4* sink, cudaStream_t s, int sms) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  size_t n = bytes / sizeof(int4);
  std::vector<double> t;
  for (int trial = -1; trial < TRIALS; trial++) {
    CHECK(cudaEventRecord(a, s));
    if (read) sm_read<<<sms * 8, 512, 0, s>>>(host_mapped, n, sink);
    else sm_write<<<sms * 8, 512, 0, s>>>(host_mapped, n);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(b, s));
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    if (trial >= 0) t.push_back(ms * 1e-3);
  }
  return median(t);
}

static void row(FILE* f, const std::string& pattern, const Copy& c, double seconds) {
  fprintf(f, "%s,%s,%s,%zuB,%.9fs,%s\n", pattern.c_str(), c.h2d ? "MEM0" : "GPU0", c.h2d ? "GPU0" : "MEM0", c.bytes, seconds,
          c.h2d ? "read" : "write");
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
  fprintf(stderr, "%s, %d SMs, %d async engines, PCI %02x:%02x\n", prop.name, prop.multiProcessorCount,
          prop.asyncEngineCount, prop.pciBusID, prop.pciDeviceID);

  int* flag;
  CHECK(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped));
  open_flag = flag;
  CHECK(cudaHostGetDevicePointer((void**)&open_flag_dev, flag, 0));
  const size_t NBUF = 4;
  Buffers buf;
  std::vector<cudaStream_t> st(NBUF);
  for (size_t i = 0; i < NBUF; i++) {
    char *h, *d;
    CHECK(cudaHostAlloc(&h, MAX_BYTES, cudaHostAllocMapped));
    memset(h, int(i + 1), MAX_BYTES);
    CHECK(cudaMalloc(&d, MAX_BYTES));
    CHECK(cudaMemset(d, int(i + 7), MAX_BYTES));
    buf.host.push_back(h);
    buf.dev.push_back(d);
    CHECK(cudaStreamCreateWithFlags(&st[i], cudaStreamNonBlocking));
  }
  fprintf(f, "pattern,src,dst,size,time,access\n");

  for (int dir = 0; dir < 2; dir++)
    for (int k = 0; k <= 30; k++) {
      Copy c{dir == 0, size_t(1) << k};
      double s = chain(c, buf.host[0], buf.dev[0], st[0]);
      row(f, std::string(c.h2d ? "sweep-h2d-" : "sweep-d2h-") + std::to_string(c.bytes), c, s);
      fprintf(stderr, "%s %10zu B  %9.3f us  %7.2f GB/s\n", c.h2d ? "h2d" : "d2h", c.bytes, s * 1e6, c.bytes / s * 1e-9);
    }

  const size_t G = MAX_BYTES, H = G / 2, Q = G / 4;
  struct Named {
    const char* name;
    std::vector<Copy> copies;
  };
  std::vector<Named> sets = {
      {"both-ways", {{true, G}, {false, G}}},
      {"both-ways-h2d-long", {{true, G}, {false, Q}}},
      {"both-ways-d2h-long", {{true, Q}, {false, G}}},
      {"two-h2d", {{true, H}, {true, H}}},
      {"two-d2h", {{false, H}, {false, H}}},
      {"two-h2d-short-first", {{true, Q}, {true, G}}},
      {"two-h2d-long-first", {{true, G}, {true, Q}}},
      {"two-d2h-long-first", {{false, G}, {false, Q}}},
      {"two-h2d-4MiB", {{true, 4 << 20}, {true, 4 << 20}}},
      {"two-h2d-64MiB", {{true, 64 << 20}, {true, 64 << 20}}},
      {"four-h2d", {{true, Q}, {true, Q}, {true, Q}, {true, Q}}},
      {"two-h2d-one-d2h", {{true, H}, {true, H}, {false, G}}},
      {"one-h2d-two-d2h", {{true, G}, {false, H}, {false, H}}},
      {"two-each-way", {{true, H}, {true, H}, {false, H}, {false, H}}},
  };
  for (auto& set : sets) {
    auto t = together(set.copies, buf, st);
    for (size_t i = 0; i < t.size(); i++) {
      row(f, set.name, set.copies[i], t[i]);
      fprintf(stderr, "%-20s %s %10zu B  %9.3f ms  %7.2f GB/s\n", set.name, set.copies[i].h2d ? "h2d" : "d2h",
              set.copies[i].bytes, t[i] * 1e3, set.copies[i].bytes / t[i] * 1e-9);
    }
  }

  int4* sink;
  CHECK(cudaMalloc(&sink, sizeof(int4)));
  for (int read = 1; read >= 0; read--) {
    int4* mapped;
    CHECK(cudaHostGetDevicePointer((void**)&mapped, buf.host[0], 0));
    double s = kernel_seconds(read, mapped, G, sink, st[0], prop.multiProcessorCount);
    fprintf(stderr, "%-20s %10zu B  %9.3f ms  %7.2f GB/s\n", read ? "sm-read" : "sm-write", G, s * 1e3, G / s * 1e-9);
  }
  fclose(f);
  return 0;
}
