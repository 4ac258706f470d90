// fp8q — toolchain detection shared by every header. The only macros fp8q defines live here.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__) || defined(__HIP__)
#define FP8Q_HD __host__ __device__
#else
#define FP8Q_HD
#endif

// Set while compiling device code (CUDA device pass or HIP device pass).
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define FP8Q_DEVICE_PASS 1
#else
#define FP8Q_DEVICE_PASS 0
#endif

#if defined(__HIPCC__) || defined(__HIP__)
#define FP8Q_TOOLCHAIN_HIP 1
#else
#define FP8Q_TOOLCHAIN_HIP 0
#endif

#if defined(__CUDACC__) && !FP8Q_TOOLCHAIN_HIP
#define FP8Q_TOOLCHAIN_CUDA 1
#else
#define FP8Q_TOOLCHAIN_CUDA 0
#endif

// The emulator (tests only): the GPU code compiled by the host compiler and run on the CPU
// (detail/emu/adapter.hpp). A test defines FP8Q_EMULATED_GPU (the wave size, 32 or 64).
#if defined(FP8Q_EMULATED_GPU) && !FP8Q_TOOLCHAIN_CUDA && !FP8Q_TOOLCHAIN_HIP
#define FP8Q_TOOLCHAIN_EMU 1
#else
#define FP8Q_TOOLCHAIN_EMU 0
#endif
