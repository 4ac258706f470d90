#define FP8Q_SWEEP_FORMAT e4m3fnuz
#define FP8Q_SWEEP_INPUT f16
#define FP8Q_SWEEP_INPUT_ID 1
#define FP8Q_SWEEP_FUNCTION sweep_e4m3fnuz_f16
#include "quantize_sweep.inl"
