#define FP8Q_SWEEP_FORMAT e4m3fnuz
#define FP8Q_SWEEP_FUNCTION sweep_e4m3fnuz
#include "quantize_sweep.inl"
