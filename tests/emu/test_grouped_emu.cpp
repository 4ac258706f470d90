// The per-group GPU test program, its kernels run by the emulator.
#include "../gpu/test_grouped_gpu.cu"
