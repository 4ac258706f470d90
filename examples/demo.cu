// The CUDA build of the demo (fp8q_demo_cuda): the same program compiled by nvcc, so that
// fp8q/device.hpp queries the CUDA runtime for every visible device.
#include "demo.cpp"
