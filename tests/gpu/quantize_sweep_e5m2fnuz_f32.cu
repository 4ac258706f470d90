#define FP8Q_SWEEP_FORMAT e5m2fnuz
#define FP8Q_SWEEP_INPUT float
#define FP8Q_SWEEP_INPUT_ID 2
#define FP8Q_SWEEP_FUNCTION sweep_e5m2fnuz_f32
#include "quantize_sweep.inl"
