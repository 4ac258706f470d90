#define FP8Q_SWEEP_FORMAT e4m3fn
#define FP8Q_SWEEP_INPUT float
#define FP8Q_SWEEP_INPUT_ID 2
#define FP8Q_SWEEP_FUNCTION sweep_e4m3fn_f32
#include "quantize_sweep.inl"
