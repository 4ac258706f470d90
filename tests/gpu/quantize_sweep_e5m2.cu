#define FP8Q_SWEEP_FORMAT e5m2
#define FP8Q_SWEEP_FUNCTION sweep_e5m2
#include "quantize_sweep.inl"
