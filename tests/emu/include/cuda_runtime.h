// tests/emu/include/cuda_runtime.h — the part of the CUDA runtime fp8q's GPU test programs use,
// over host memory and fp8q's emulator (include/fp8q/detail/emu/adapter.hpp), so that the same
// programs run their kernels on the CPU. Built only into the *_emu test targets
// (tests/emu/CMakeLists.txt); a real CUDA build never sees this file.
#pragma once

#if !defined(FP8Q_EMULATED_GPU)
#error "tests/emu/include/cuda_runtime.h is the emulator's: define FP8Q_EMULATED_GPU"
#endif

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "fp8q/device.hpp"

enum cudaError_t { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2, cudaErrorStreamCaptureUnsupported = 3 };
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice, cudaMemcpyDefault };
enum cudaStreamCaptureMode { cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeRelaxed };
enum cudaDeviceAttr { cudaDevAttrComputeCapabilityMajor, cudaDevAttrMultiProcessorCount };

using cudaStream_t = fp8q::emu::stream*;
struct cuda_emu_graph {
  std::vector<std::function<void()>> ops;
};
using cudaGraph_t = cuda_emu_graph*;
using cudaGraphExec_t = cuda_emu_graph*;

inline const char* cudaGetErrorString(cudaError_t e) { return e == cudaSuccess ? "no error" : "emulated CUDA error"; }
inline const char* cudaGetErrorName(cudaError_t e) { return e == cudaSuccess ? "cudaSuccess" : "cudaErrorEmulated"; }
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : cudaErrorInvalidValue; }
inline cudaError_t cudaGetDevice(int* d) {
  *d = 0;
  return cudaSuccess;
}
inline cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr a, int) {
  *v = a == cudaDevAttrComputeCapabilityMajor ? 0 : fp8q::emu::multiprocessors;  // not an sm_90
  return cudaSuccess;
}
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }

// 256-byte aligned, as cudaMalloc's
inline cudaError_t cudaMalloc(void** p, std::size_t bytes) {
  *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);
  return *p != nullptr ? cudaSuccess : cudaErrorMemoryAllocation;
}
template <class T>
cudaError_t cudaMalloc(T** p, std::size_t bytes) {
  void* v = nullptr;
  const cudaError_t e = cudaMalloc(&v, bytes);
  *p = static_cast<T*>(v);
  return e;
}
inline cudaError_t cudaFree(void* p) {
  std::free(p);
  return cudaSuccess;
}
inline cudaError_t cudaMallocHost(void** p, std::size_t bytes) { return cudaMalloc(p, bytes); }
inline cudaError_t cudaFreeHost(void* p) { return cudaFree(p); }

inline cudaError_t cudaStreamCreate(cudaStream_t* s) {
  *s = new fp8q::emu::stream{};
  return cudaSuccess;
}
inline cudaError_t cudaStreamDestroy(cudaStream_t s) {
  delete s;
  return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }

inline cudaError_t cudaMemcpyAsync(void* d, const void* s, std::size_t n, cudaMemcpyKind, cudaStream_t st = nullptr) {
  fp8q::emu::enqueue(st, [=] { std::memmove(d, s, n); });
  return cudaSuccess;
}
inline cudaError_t cudaMemcpy(void* d, const void* s, std::size_t n, cudaMemcpyKind k) { return cudaMemcpyAsync(d, s, n, k); }
inline cudaError_t cudaMemsetAsync(void* p, int v, std::size_t n, cudaStream_t st = nullptr) {
  fp8q::emu::enqueue(st, [=] { std::memset(p, v, n); });
  return cudaSuccess;
}
inline cudaError_t cudaMemset(void* p, int v, std::size_t n) { return cudaMemsetAsync(p, v, n); }

// Graphs: the work enqueued on a capturing stream is recorded, and replayed by cudaGraphLaunch.
inline cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode) {
  if (s == nullptr) return cudaErrorStreamCaptureUnsupported;
  s->capturing = true;
  s->recorded.clear();
  return cudaSuccess;
}
inline cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* g) {
  if (s == nullptr || !s->capturing) return cudaErrorInvalidValue;
  s->capturing = false;
  *g = new cuda_emu_graph{std::move(s->recorded)};
  s->recorded.clear();
  return cudaSuccess;
}
inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t* e, cudaGraph_t g, unsigned long long = 0) {
  *e = new cuda_emu_graph{g->ops};
  return cudaSuccess;
}
inline cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t s) {
  for (auto& op : e->ops) fp8q::emu::enqueue(s, op);
  return cudaSuccess;
}
inline cudaError_t cudaGraphDestroy(cudaGraph_t g) {
  delete g;
  return cudaSuccess;
}
inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e) {
  delete e;
  return cudaSuccess;
}
