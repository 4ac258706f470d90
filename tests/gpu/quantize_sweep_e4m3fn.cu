#define FP8Q_SWEEP_FORMAT e4m3fn
#define FP8Q_SWEEP_FUNCTION sweep_e4m3fn
#include "quantize_sweep.inl"
