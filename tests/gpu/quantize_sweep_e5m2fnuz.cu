#define FP8Q_SWEEP_FORMAT e5m2fnuz
#define FP8Q_SWEEP_FUNCTION sweep_e5m2fnuz
#include "quantize_sweep.inl"
