#define FP8Q_SWEEP_FORMAT e5m2fnuz
#define FP8Q_SWEEP_INPUT f16
#define FP8Q_SWEEP_INPUT_ID 1
#define FP8Q_SWEEP_FUNCTION sweep_e5m2fnuz_f16
#include "quantize_sweep.inl"
