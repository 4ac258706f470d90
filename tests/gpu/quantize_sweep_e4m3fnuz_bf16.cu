#define FP8Q_SWEEP_FORMAT e4m3fnuz
#define FP8Q_SWEEP_INPUT bf16
#define FP8Q_SWEEP_INPUT_ID 0
#define FP8Q_SWEEP_FUNCTION sweep_e4m3fnuz_bf16
#include "quantize_sweep.inl"
