#define FP8Q_SWEEP_FORMAT e5m2
#define FP8Q_SWEEP_INPUT f16
#define FP8Q_SWEEP_INPUT_ID 1
#define FP8Q_SWEEP_FUNCTION sweep_e5m2_f16
#include "quantize_sweep.inl"
