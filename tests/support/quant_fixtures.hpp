// fp8q tests — fixtures for the quantization tests (tests/quant): seeded random inputs with
// adversarial values, an independent reference quantizer written in double precision from the
// written rules (ARCHITECTURE §3, scale.hpp, convert.hpp comments), and a harness that runs the
// host backend on poisoned, padded buffers of any layout and reads the results back logically.
//
// Independence: nothing here calls fp8q's encode/decode/scale functions. The reference derives
// FP8 values from (mantissa bits, bias, max) typed in from the OCP / MLIR tables, rounds with
// nearbyint on exact double quotients, and computes scales as f64 divisions rounded once to f32.
// The only fp8q pieces used are the views, the storage types, the input widening/narrowing
// helpers (to_float/to_bf16/to_f16, tested by the conversion tests) and stochastic_bits (the
// documented random stream, a definition rather than an algorithm under test).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "fp8q/convert.hpp"
#include "fp8q/format.hpp"
#include "fp8q/host/quantize.hpp"
#include "fp8q/scale.hpp"
#include "fp8q/spec.hpp"
#include "fp8q/views.hpp"

namespace fq {

using i64 = std::int64_t;
using u8 = std::uint8_t;
using u32 = std::uint32_t;

// ---------------------------------------------------------------------------------------------
// bits and seeds

inline u32 bits_of(float f) {
  u32 u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float float_of(u32 u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline std::string hex(u32 v, int digits = 8) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%0*x", digits, v);
  return buf;
}
inline std::string fstr(float f) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g (%s)", static_cast<double>(f), hex(bits_of(f)).c_str());
  return buf;
}

/// One seed per test process: FP8Q_TEST_SEED if set, otherwise fresh. Printed once so a failure
/// can be replayed with FP8Q_TEST_SEED=<seed>.
inline std::uint64_t base_seed() {
  static const std::uint64_t seed = [] {
    std::uint64_t s = 0;
    if (const char* env = std::getenv("FP8Q_TEST_SEED")) {
      s = std::strtoull(env, nullptr, 0);
    } else {
      std::random_device rd;
      s = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
    }
    std::printf("fp8q quant tests: seed %llu (replay with FP8Q_TEST_SEED=%llu)\n",
                static_cast<unsigned long long>(s), static_cast<unsigned long long>(s));
    std::fflush(stdout);
    return s;
  }();
  return seed;
}
/// A per-test seed derived from the process seed and a tag (the test name).
inline std::uint64_t test_seed(const char* tag) {
  std::uint64_t h = 1469598103934665603ull;
  for (const char* p = tag; *p; ++p) h = (h ^ static_cast<u8>(*p)) * 1099511628211ull;
  return base_seed() ^ h;
}

// ---------------------------------------------------------------------------------------------
// formats, typed in from the OCP / MLIR tables (not from fp8q::traits)

struct fmt_desc {
  const char* name;
  int mbits;          // mantissa bits
  int bias;           // exponent bias
  double max;         // largest finite value
  u8 max_code;        // its code
  bool has_inf;       // e5m2 only
  bool fnuz;          // single NaN 0x80, unsigned zero
  u8 nan_code;        // canonical positive NaN written by encode
  int emax;           // floor(log2(max))
  int exp_all_ones;   // largest exponent field
};

inline fmt_desc desc(fp8q::format f) {
  switch (f) {
    case fp8q::format::e4m3fn: return {"e4m3fn", 3, 7, 448.0, 0x7E, false, false, 0x7F, 8, 15};
    case fp8q::format::e4m3fnuz: return {"e4m3fnuz", 3, 8, 240.0, 0x7F, false, true, 0x80, 7, 15};
    case fp8q::format::e5m2: return {"e5m2", 2, 15, 57344.0, 0x7B, true, false, 0x7E, 15, 31};
    case fp8q::format::e5m2fnuz:
      return {"e5m2fnuz", 2, 16, 57344.0, 0x7F, false, true, 0x80, 15, 31};
    case fp8q::format::e8m0fnu: break;
  }
  return {"?", 0, 0, 0.0, 0, false, false, 0, 0, 0};
}

/// floor(log2(a)) of a positive finite double, exact (frexp, no libm log).
inline int ilog2(double a) {
  int k = 0;
  (void)std::frexp(a, &k);  // a = f * 2^k, f in [0.5, 1)
  return k - 1;
}
inline bool is_pow2(double a) {
  int k = 0;
  return std::frexp(a, &k) == 0.5;
}

/// Value of an FP8 code, by the format formula.
inline double ref_decode(fp8q::format f, u8 code) {
  const fmt_desc d = desc(f);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (d.fnuz && code == 0x80) return nan;
  const bool neg = (code & 0x80) != 0;
  const int mag = code & 0x7f;
  const int field = mag >> d.mbits;
  const int frac = mag & ((1 << d.mbits) - 1);
  if (!d.fnuz) {
    if (d.has_inf && field == d.exp_all_ones) {
      if (frac != 0) return nan;
      return neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    }
    if (!d.has_inf && mag == 0x7f) return nan;
  }
  const double v = field == 0 ? std::ldexp(frac, 1 - d.bias - d.mbits)
                              : std::ldexp((1 << d.mbits) + frac, field - d.bias - d.mbits);
  return neg ? -v : v;
}

inline bool ref_is_nan_code(fp8q::format f, u8 code) { return std::isnan(ref_decode(f, code)); }

/// Code of a representable magnitude v (0 <= v <= max) with sign.
inline u8 code_of_value(const fmt_desc& d, double v, bool neg) {
  if (v == 0.0) return d.fnuz ? u8{0} : static_cast<u8>(neg ? 0x80 : 0);
  const int emin = 1 - d.bias;
  int code = 0;
  const int e = ilog2(v);
  if (e < emin) {
    code = static_cast<int>(std::ldexp(v, -(emin - d.mbits)));  // subnormal: multiple of 2^(emin-m)
  } else {
    const int mant = static_cast<int>(std::ldexp(v, -(e - d.mbits))) - (1 << d.mbits);
    code = ((e + d.bias) << d.mbits) | mant;
  }
  return static_cast<u8>((neg ? 0x80 : 0) | code);
}

/// encode(x) for an f32 value x: nearest-even (or stochastic with `random`), saturate or
/// propagate, computed on the exact quotient x / ulp in double.
inline u8 ref_encode(fp8q::format f, float x, bool saturate, bool stochastic = false,
                     u32 random = 0) {
  const fmt_desc d = desc(f);
  const bool neg = std::signbit(x);
  const u8 sign = neg ? 0x80 : 0;
  const u8 overflowed = saturate   ? static_cast<u8>(sign | d.max_code)
                        : d.has_inf ? static_cast<u8>(sign | (d.exp_all_ones << d.mbits))
                        : d.fnuz    ? u8{0x80}
                                    : static_cast<u8>(sign | d.nan_code);
  if (std::isnan(x)) return d.fnuz ? u8{0x80} : static_cast<u8>(sign | d.nan_code);
  if (std::isinf(x)) return overflowed;
  const double a = std::fabs(static_cast<double>(x));
  if (a == 0.0) return code_of_value(d, 0.0, neg);
  int e = ilog2(a);
  const int emin = 1 - d.bias;
  if (e < emin) e = emin;
  const double ulp = std::ldexp(1.0, e - d.mbits);
  const double q = a / ulp;  // exact: a has 24 significant bits and ulp is a power of two
  double n = 0;
  if (stochastic) {
    const double fl = std::floor(q);
    const double threshold = std::floor((q - fl) * 4294967296.0);  // exact (<= 24 bits)
    n = fl + (static_cast<double>(random) < threshold ? 1.0 : 0.0);
  } else {
    n = std::nearbyint(q);  // default rounding mode: ties to even
  }
  const double v = n * ulp;
  if (v > d.max) return overflowed;
  return code_of_value(d, v, neg);
}

/// f32 product x*s correctly rounded (the f64 product of two floats is exact).
inline float mul_f32(float x, float s) {
  return static_cast<float>(static_cast<double>(x) * static_cast<double>(s));
}

// ---------------------------------------------------------------------------------------------
// scale rules, from the text of ARCHITECTURE §3 / scale.hpp

/// amax = max |x| in double; any NaN makes it NaN.
inline float ref_amax(const std::vector<float>& xs) {
  double m = 0.0;
  for (float x : xs) {
    if (std::isnan(x)) return std::numeric_limits<float>::quiet_NaN();
    m = std::max(m, std::fabs(static_cast<double>(x)));
  }
  return static_cast<float>(m);  // exact: m is one of the inputs' magnitudes
}

/// s = max / max(amax, eps), the division done in f64 and rounded once to f32 (TorchAO's way;
/// equal to a correctly rounded f32 division). power_of_2: 2^floor(log2 s), done in f64.
inline float ref_scale(fp8q::format f, float amax, float eps, bool power_of_2) {
  if (std::isnan(amax)) return float_of(0x7fc00000u);
  const double denom = static_cast<double>(amax) > static_cast<double>(eps) ? amax : eps;
  float s = static_cast<float>(desc(f).max / denom);
  if (power_of_2 && s > 0.0f && std::isfinite(s)) {
    s = static_cast<float>(std::exp2(std::floor(std::log2(static_cast<double>(s)))));
  }
  return s;
}
/// The canonical NaN every computed NaN becomes (docs/semantics.md "NaN codes").
inline float canonical_nan() { return float_of(0x7fc00000u); }
inline float ref_inverse(float s) {
  return std::isnan(s) ? canonical_nan() : static_cast<float>(1.0 / static_cast<double>(s));
}

/// MX e8m0 code of a block amax (scale.hpp rules): 0xFF for NaN, 0 for amax 0;
/// FLOOR: floor(log2 amax) - emax; RCEIL: ceil(log2(amax / max)) with the quotient rounded to
/// f32; Inf amax counts as 2^128; exponent clamped to [-127, 127], biased by 127.
inline u8 ref_mx_code(fp8q::format f, float amax, bool rceil) {
  const fmt_desc d = desc(f);
  if (std::isnan(amax)) return 0xff;
  if (amax == 0.0f) return 0;
  int e = 0;
  if (!rceil) {
    e = (std::isinf(amax) ? 128 : ilog2(amax)) - d.emax;
  } else {
    const float q = static_cast<float>(static_cast<double>(amax) / d.max);
    if (std::isinf(q)) {
      e = 128;
    } else if (q == 0.0f) {
      e = -127;  // log2(0) = -inf clamps to -127 (frexp(0) would give a bogus exponent)
    } else {
      e = ilog2(q) + (is_pow2(q) ? 0 : 1);
    }
  }
  e = std::clamp(e, -127, 127);
  return static_cast<u8>(e + 127);
}
/// The multiplier applied to data in an MX block: 2^(127 - code), NaN for 0xFF.
inline float ref_mx_multiplier(u8 code) {
  if (code == 0xff) return std::numeric_limits<float>::quiet_NaN();
  return static_cast<float>(std::ldexp(1.0, 127 - static_cast<int>(code)));
}

// ---------------------------------------------------------------------------------------------
// rounding a double to bf16 / f16 / f32 once (for dequantization references)

/// Round a finite double to a binary format with `p` significand bits (implicit bit included),
/// minimum normal exponent `emin`, largest finite `max` (overflow -> Inf), nearest even.
inline double round_binary(double v, int p, int emin, double max) {
  if (std::isnan(v) || std::isinf(v) || v == 0.0) return v;
  const double a = std::fabs(v);
  int e = ilog2(a);
  if (e < emin) e = emin;
  const double ulp = std::ldexp(1.0, e - (p - 1));
  double r = std::nearbyint(a / ulp) * ulp;
  const double next_above_max = max + std::ldexp(1.0, ilog2(max) - (p - 1));
  // overflow when rounding reaches the first value beyond max (ties at max+ulp/2 go to even:
  // max has an odd last bit in bf16/f16/f32, so the tie goes up, i.e. to Inf)
  if (r >= next_above_max) r = std::numeric_limits<double>::infinity();
  return std::signbit(v) ? -r : r;
}
template <class Out>
double round_to(double v) {
  if constexpr (std::is_same_v<Out, float>) {
    return static_cast<float>(v);
  } else if constexpr (std::is_same_v<Out, fp8q::bf16>) {
    return round_binary(v, 8, -126, 3.3895313892515355e38);
  } else {
    return round_binary(v, 11, -14, 65504.0);
  }
}

// ---------------------------------------------------------------------------------------------
// input types

template <class T>
inline const char* type_name() {
  if constexpr (std::is_same_v<T, float>) return "f32";
  if constexpr (std::is_same_v<T, fp8q::bf16>) return "bf16";
  if constexpr (std::is_same_v<T, fp8q::f16>) return "f16";
  return "?";
}
template <class T>
T from_float(float v) {
  if constexpr (std::is_same_v<T, float>) return v;
  if constexpr (std::is_same_v<T, fp8q::bf16>) return fp8q::to_bf16(v);
  if constexpr (std::is_same_v<T, fp8q::f16>) return fp8q::to_f16(v);
}
template <class T>
float widen(T v) {
  return fp8q::to_float(v);
}
/// v rounded to what T can hold (the logical value the quantizer sees).
template <class T>
float representable(float v) {
  return widen<T>(from_float<T>(v));
}
/// The smallest positive subnormal of T, and a random subnormal of T.
template <class T>
float random_subnormal(std::mt19937_64& rng) {
  if constexpr (std::is_same_v<T, float>) {
    return float_of(static_cast<u32>(1 + rng() % 0x7fffffu));
  } else if constexpr (std::is_same_v<T, fp8q::bf16>) {
    return widen(fp8q::bf16{static_cast<std::uint16_t>(1 + rng() % 0x7fu)});
  } else {
    return widen(fp8q::f16{static_cast<std::uint16_t>(1 + rng() % 0x3ffu)});
  }
}
/// Exponent range safe for random normal values of T (keeps f16 away from Inf).
template <class T>
constexpr int max_exp() {
  return std::is_same_v<T, fp8q::f16> ? 14 : 40;
}
template <class T>
constexpr int min_exp() {
  return std::is_same_v<T, fp8q::f16> ? -14 : -40;
}

// ---------------------------------------------------------------------------------------------
// random logical inputs

struct gen_cfg {
  int exp_lo = -6;            // exponent range of ordinary values, before row/col spread
  int exp_hi = 6;
  int spread = 6;             // per-row and per-column exponent offsets in [-spread, spread]
  double p_zero = 0.02;       // +0
  double p_negzero = 0.01;    // -0
  double p_subnormal = 0.01;  // subnormal of the input type
  double p_pow2 = 0.05;       // exact powers of two
  double p_small_int = 0.05;  // small integers (exact products, ties after scaling)
  double p_nan = 0.0;
  double p_inf = 0.0;
  bool full_range = false;    // clamp exponents to the whole f32/bf16 range instead of [-40, 40]
};

/// A batch x rows x cols logical tensor of values exactly representable in T, index
/// (b * rows + r) * cols + c.
template <class T>
std::vector<float> random_values(std::mt19937_64& rng, i64 batch, i64 rows, i64 cols,
                                 const gen_cfg& g = {}) {
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  std::uniform_int_distribution<int> spread(-g.spread, g.spread);
  std::vector<int> row_off(static_cast<std::size_t>(std::max<i64>(batch * rows, 0)));
  std::vector<int> col_off(static_cast<std::size_t>(std::max<i64>(cols, 0)));
  for (int& o : row_off) o = spread(rng);
  for (int& o : col_off) o = spread(rng);
  std::vector<float> out(static_cast<std::size_t>(std::max<i64>(batch * rows * cols, 0)));
  for (i64 br = 0; br < batch * rows; ++br) {
    for (i64 c = 0; c < cols; ++c) {
      const bool neg = (rng() & 1u) != 0;
      double p = u01(rng);
      float v = 0.0f;
      if ((p -= g.p_nan) < 0) {
        v = std::numeric_limits<float>::quiet_NaN();
      } else if ((p -= g.p_inf) < 0) {
        v = std::numeric_limits<float>::infinity();
      } else if ((p -= g.p_zero) < 0) {
        v = 0.0f;
      } else if ((p -= g.p_negzero) < 0) {
        v = -0.0f;
      } else if ((p -= g.p_subnormal) < 0) {
        v = random_subnormal<T>(rng);
      } else {
        int e = std::uniform_int_distribution<int>(g.exp_lo, g.exp_hi)(rng) +
                row_off[static_cast<std::size_t>(br)] + col_off[static_cast<std::size_t>(c)];
        if (g.full_range && !std::is_same_v<T, fp8q::f16>) {
          e = std::clamp(e, -149, 126);
        } else {
          e = std::clamp(e, min_exp<T>(), max_exp<T>());
        }
        if ((p -= g.p_pow2) < 0) {
          v = static_cast<float>(std::ldexp(1.0, e));
        } else if ((p -= g.p_small_int) < 0) {
          v = static_cast<float>(std::uniform_int_distribution<int>(1, 40)(rng));
        } else {
          v = static_cast<float>(std::ldexp(1.0 + u01(rng), e));
        }
      }
      v = representable<T>(neg ? -v : v);
      out[static_cast<std::size_t>(br * cols + c)] = v;
    }
  }
  return out;
}

/// G cumulative end offsets over `extent`, some groups empty (random cut points).
inline std::vector<std::int32_t> random_offsets(std::mt19937_64& rng, i64 extent, i64 groups,
                                                double p_empty = 0.25) {
  std::vector<std::int32_t> ends(static_cast<std::size_t>(groups));
  std::vector<i64> cuts;
  for (i64 g = 0; g + 1 < groups; ++g) {
    cuts.push_back(extent == 0 ? 0 : static_cast<i64>(rng() % static_cast<u32>(extent + 1)));
  }
  std::sort(cuts.begin(), cuts.end());
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  // make some groups empty on purpose by repeating the previous cut
  for (std::size_t i = 1; i < cuts.size(); ++i) {
    if (u01(rng) < p_empty) cuts[i] = cuts[i - 1];
  }
  for (i64 g = 0; g + 1 < groups; ++g) ends[static_cast<std::size_t>(g)] = static_cast<std::int32_t>(cuts[static_cast<std::size_t>(g)]);
  if (groups > 0) ends[static_cast<std::size_t>(groups - 1)] = static_cast<std::int32_t>(extent);
  return ends;
}

// ---------------------------------------------------------------------------------------------
// the reference quantizer

struct ref_cfg {
  fp8q::format fmt = fp8q::format::e4m3fn;
  fp8q::granularity gran = fp8q::granularity::row;
  int br = 0, bc = 0;  // block dims
  bool mx = false;
  bool rceil = false;
  float eps = 1e-12f;
  bool pow2 = false;
  bool saturate = true;
  bool stochastic = false;
  fp8q::stored_scale store = fp8q::stored_scale::inverse;
};

template <fp8q::spec S>
ref_cfg ref_cfg_of() {
  ref_cfg c;
  c.fmt = S.out;
  c.gran = S.granularity;
  c.br = S.block_rows;
  c.bc = S.block_cols;
  c.mx = S.scale == fp8q::scale_format::e8m0;
  c.rceil = S.mx_rounding == fp8q::e8m0_rounding::rceil;
  c.eps = S.eps.value();
  c.pow2 = S.power_of_2;
  c.saturate = S.overflow == fp8q::overflow::saturate;
  c.stochastic = S.rounding == fp8q::rounding::stochastic;
  c.store = S.store;
  return c;
}

/// Logical extents of the scale matrix (per batch item) of a granularity.
inline void scale_extents(const ref_cfg& c, i64 M, i64 N, i64 G, i64& sr, i64& sc) {
  using fp8q::granularity;
  switch (c.gran) {
    case granularity::tensor: sr = 1; sc = 1; return;
    case granularity::row: sr = M; sc = 1; return;
    case granularity::col: sr = 1; sc = N; return;
    case granularity::block: sr = (M + c.br - 1) / c.br; sc = (N + c.bc - 1) / c.bc; return;
    case granularity::group_row: sr = G; sc = M; return;
    case granularity::group_col: sr = G; sc = N; return;
  }
}

/// A logical problem: batch x M x N values plus group end offsets (group granularities).
struct problem {
  i64 B = 1, M = 0, N = 0;
  std::vector<float> x;                // (b*M + r)*N + c
  std::vector<std::int32_t> ends;      // group_row: along columns; group_col: along rows
  float at(i64 b, i64 r, i64 c) const { return x[static_cast<std::size_t>((b * M + r) * N + c)]; }
};

/// Expected results in logical order. Scale entries of empty groups are not written.
struct expected {
  i64 B = 1, M = 0, N = 0, SR = 0, SC = 0;
  std::vector<u8> q;            // (b*M + r)*N + c; `q_written` false where nothing is written
  std::vector<bool> q_written;
  std::vector<u32> s;           // f32 bits of s   (b*SR + i)*SC + j
  std::vector<u32> inv;         // f32 bits of 1/s, or the e8m0 code for MX
  std::vector<bool> s_written;
  std::vector<float> amax;      // the unit's amax (independent loop), same index as s
  std::vector<float> mult;      // the multiplier applied before encoding, same index as s
};

/// Group of index x under end offsets `ends` (-1 when past the last end).
inline i64 group_of(const std::vector<std::int32_t>& ends, i64 x) {
  i64 start = 0;
  for (std::size_t g = 0; g < ends.size(); ++g) {
    if (x >= start && x < ends[g]) return static_cast<i64>(g);
    start = std::max<i64>(start, ends[g]);
  }
  return -1;
}

/// Scale entry (i, j) of element (r, c); false when the element is in no unit.
inline bool scale_index(const ref_cfg& c, const problem& p, i64 r, i64 col, i64& i, i64& j) {
  using fp8q::granularity;
  switch (c.gran) {
    case granularity::tensor: i = 0; j = 0; return true;
    case granularity::row: i = r; j = 0; return true;
    case granularity::col: i = 0; j = col; return true;
    case granularity::block: i = r / c.br; j = col / c.bc; return true;
    case granularity::group_row: i = group_of(p.ends, col); j = r; return i >= 0;
    case granularity::group_col: i = group_of(p.ends, r); j = col; return i >= 0;
  }
  return false;
}

inline expected ref_quantize(const ref_cfg& c, const problem& p, std::uint64_t seed = 0) {
  using fp8q::granularity;
  expected e;
  e.B = p.B; e.M = p.M; e.N = p.N;
  const i64 G = static_cast<i64>(p.ends.size());
  scale_extents(c, p.M, p.N, G, e.SR, e.SC);
  const std::size_t nq = static_cast<std::size_t>(p.B * p.M * p.N);
  const std::size_t ns = static_cast<std::size_t>(p.B * e.SR * e.SC);
  e.q.assign(nq, 0);
  e.q_written.assign(nq, false);
  e.s.assign(ns, 0);
  e.inv.assign(ns, 0);
  e.s_written.assign(ns, false);
  e.amax.assign(ns, 0.0f);
  e.mult.assign(ns, 0.0f);
  auto scale_index = [&](i64 r, i64 col, i64& i, i64& j) { return fq::scale_index(c, p, r, col, i, j); };
  for (i64 b = 0; b < p.B; ++b) {
    std::vector<std::vector<float>> members(static_cast<std::size_t>(e.SR * e.SC));
    for (i64 r = 0; r < p.M; ++r) {
      for (i64 col = 0; col < p.N; ++col) {
        i64 i = 0, j = 0;
        if (scale_index(r, col, i, j)) members[static_cast<std::size_t>(i * e.SC + j)].push_back(p.at(b, r, col));
      }
    }
    std::vector<float> mult(members.size());
    for (std::size_t k = 0; k < members.size(); ++k) {
      const std::size_t out = static_cast<std::size_t>(b * e.SR * e.SC) + k;
      if (members[k].empty()) continue;  // empty group: nothing written
      const float amax = ref_amax(members[k]);
      e.amax[out] = amax;
      e.s_written[out] = true;
      if (c.mx) {
        const u8 code = ref_mx_code(c.fmt, amax, c.rceil);
        e.inv[out] = code;
        mult[k] = ref_mx_multiplier(code);
        e.mult[out] = mult[k];
      } else {
        const float s = ref_scale(c.fmt, amax, c.eps, c.pow2);
        e.s[out] = bits_of(s);
        e.inv[out] = bits_of(ref_inverse(s));
        mult[k] = s;
        e.mult[out] = s;
      }
    }
    for (i64 r = 0; r < p.M; ++r) {
      for (i64 col = 0; col < p.N; ++col) {
        i64 i = 0, j = 0;
        if (!scale_index(r, col, i, j)) continue;
        const std::size_t qi = static_cast<std::size_t>((b * p.M + r) * p.N + col);
        float y = mul_f32(p.at(b, r, col), mult[static_cast<std::size_t>(i * e.SC + j)]);
        if (std::isnan(y)) y = float_of(0x7fc00000u);  // computed NaNs are canonical and positive
        const u32 rnd = c.stochastic
                            ? fp8q::stochastic_bits(seed, static_cast<std::uint64_t>((b * p.M + r) * p.N + col))
                            : 0u;
        e.q[qi] = ref_encode(c.fmt, y, c.saturate, c.stochastic, rnd);
        e.q_written[qi] = true;
      }
    }
  }
  return e;
}

// ---------------------------------------------------------------------------------------------
// buffers with padding and poison

/// Storage order and padding of one view.
struct view_cfg {
  fp8q::layout order = fp8q::layout::row_major;
  i64 ld_pad = 0;     // extra elements per row (row-major) / column (col-major)
  i64 batch_pad = 0;  // extra elements between batch items
};

inline const char* layout_name(fp8q::layout l) {
  return l == fp8q::layout::row_major ? "row_major" : "col_major";
}
inline std::string describe(const view_cfg& v) {
  std::ostringstream os;
  os << layout_name(v.order) << "+ld" << v.ld_pad << "+bs" << v.batch_pad;
  return os.str();
}

/// An owned buffer and a view into it. Positions outside the view hold the fill value.
template <class T>
struct owned {
  std::vector<T> buf;
  fp8q::matrix_view<T> v{};
  std::vector<bool> inside;  // buf positions covered by the view
};

template <class T>
owned<T> make_owned(i64 B, i64 R, i64 C, const view_cfg& cfg, T fill, i64 guard = 3) {
  owned<T> o;
  const bool rm = cfg.order == fp8q::layout::row_major;
  const i64 ld = std::max<i64>((rm ? C : R) + cfg.ld_pad, 1);
  const i64 mat = (rm ? R : C) * ld;
  const i64 bs = mat + cfg.batch_pad;
  const i64 total = B > 0 ? (B - 1) * bs + mat : 0;
  o.buf.assign(static_cast<std::size_t>(total + guard), fill);
  o.inside.assign(o.buf.size(), false);
  o.v = fp8q::matrix_view<T>{o.buf.data(), R, C, ld, cfg.order, B, bs};
  for (i64 b = 0; b < B; ++b)
    for (i64 r = 0; r < R; ++r)
      for (i64 c = 0; c < C; ++c) o.inside[static_cast<std::size_t>(o.v.offset(b, r, c))] = true;
  return o;
}

inline constexpr u8 poison_byte = 0xA5;
inline constexpr u32 poison_f32 = 0xDEADBEEFu;

template <class T>
T poison_value() {
  if constexpr (std::is_same_v<T, float>) return float_of(poison_f32);
  else return T{poison_byte};
}
template <class T>
u32 raw_bits(T v) {
  if constexpr (std::is_same_v<T, float>) return bits_of(v);
  else return v.bits;
}
template <class T>
u32 poison_bits() {
  return raw_bits(poison_value<T>());
}

/// Input buffer holding the problem in the given layout; padding holds NaN so that reading it
/// would poison an amax.
template <class In>
owned<In> make_input(const problem& p, const view_cfg& cfg) {
  owned<In> o = make_owned<In>(p.B, p.M, p.N, cfg, from_float<In>(std::numeric_limits<float>::quiet_NaN()));
  for (i64 b = 0; b < p.B; ++b)
    for (i64 r = 0; r < p.M; ++r)
      for (i64 c = 0; c < p.N; ++c) o.v(b, r, c) = from_float<In>(p.at(b, r, c));
  return o;
}

/// Layouts of the three outputs.
struct out_cfg {
  view_cfg data{};
  view_cfg scale{};
  view_cfg inverse{};
};
inline std::string describe(const out_cfg& o) {
  return "data " + describe(o.data) + ", scale " + describe(o.scale) + ", inverse " + describe(o.inverse);
}

/// Output buffers of a quantization with spec S, poisoned; unused scale views stay null.
template <fp8q::spec S>
struct outputs {
  using data_t = fp8q::fp8<S.out>;
  using scale_type = fp8q::scale_t<S>;
  owned<data_t> data;
  owned<scale_type> scale;
  owned<scale_type> inverse;
  fp8q::quantized<S> q{};
  i64 SR = 0, SC = 0;
};

template <fp8q::spec S>
outputs<S> make_outputs(i64 B, i64 M, i64 N, i64 G, const out_cfg& cfg) {
  outputs<S> o;
  using scale_type = typename outputs<S>::scale_type;
  scale_extents(ref_cfg_of<S>(), M, N, G, o.SR, o.SC);
  o.data = make_owned<typename outputs<S>::data_t>(B, M, N, cfg.data, poison_value<typename outputs<S>::data_t>());
  o.q.data = o.data.v;
  if (fp8q::stores_multiplier(S)) {
    o.scale = make_owned<scale_type>(B, o.SR, o.SC, cfg.scale, poison_value<scale_type>());
    o.q.scale = o.scale.v;
  }
  if (fp8q::stores_inverse(S)) {
    o.inverse = make_owned<scale_type>(B, o.SR, o.SC, cfg.inverse, poison_value<scale_type>());
    o.q.inverse = o.inverse.v;
  }
  return o;
}

/// Logical results read back from the output buffers.
struct actual {
  std::vector<u8> q;
  std::vector<u32> s, inv;
  std::string outside;  // non-empty when a position outside a view was written
};

template <class T>
std::string check_outside(const owned<T>& o, const char* what, u32 poison = poison_bits<T>()) {
  for (std::size_t k = 0; k < o.buf.size(); ++k) {
    if (!o.inside[k] && raw_bits(o.buf[k]) != poison) {
      return std::string(what) + ": padding/guard element " + std::to_string(k) + " written (" +
             hex(raw_bits(o.buf[k])) + ")";
    }
  }
  return {};
}

template <fp8q::spec S>
actual read_back(const outputs<S>& o, i64 B, i64 M, i64 N) {
  actual a;
  a.q.resize(static_cast<std::size_t>(B * M * N));
  for (i64 b = 0; b < B; ++b)
    for (i64 r = 0; r < M; ++r)
      for (i64 c = 0; c < N; ++c) a.q[static_cast<std::size_t>((b * M + r) * N + c)] = o.data.v(b, r, c).bits;
  const std::size_t ns = static_cast<std::size_t>(B * o.SR * o.SC);
  a.s.assign(ns, 0);
  a.inv.assign(ns, 0);
  for (i64 b = 0; b < B; ++b)
    for (i64 i = 0; i < o.SR; ++i)
      for (i64 j = 0; j < o.SC; ++j) {
        const std::size_t k = static_cast<std::size_t>((b * o.SR + i) * o.SC + j);
        if (o.scale.v.data) a.s[k] = raw_bits(o.scale.v(b, i, j));
        if (o.inverse.v.data) a.inv[k] = raw_bits(o.inverse.v(b, i, j));
      }
  a.outside = check_outside(o.data, "data");
  if (a.outside.empty() && o.scale.v.data) a.outside = check_outside(o.scale, "scale");
  if (a.outside.empty() && o.inverse.v.data) a.outside = check_outside(o.inverse, "inverse");
  return a;
}

/// Compare actual with expected bit for bit (NaN codes and NaN scales included: every computed
/// NaN is the canonical positive one): "" when equal, else the first few differences.
template <fp8q::spec S>
std::string compare(const expected& e, const actual& a, bool exact_nan_bits = true) {
  std::ostringstream os;
  int shown = 0;
  i64 bad_q = 0, bad_s = 0;
  const bool mx = S.scale == fp8q::scale_format::e8m0;
  for (std::size_t k = 0; k < e.q.size(); ++k) {
    const u8 want = e.q_written[k] ? e.q[k] : poison_byte;
    if (a.q[k] != want) {
      ++bad_q;
      if (shown++ < 8) {
        const i64 c = static_cast<i64>(k) % e.N, r = (static_cast<i64>(k) / e.N) % e.M,
                  b = static_cast<i64>(k) / (e.N * e.M);
        os << "  q(" << b << "," << r << "," << c << "): got " << hex(a.q[k], 2) << " want "
           << hex(want, 2) << (e.q_written[k] ? "" : " (untouched)") << "\n";
      }
    }
  }
  auto same_f32 = [&](u32 got, u32 want) {
    if (got == want) return true;
    return !exact_nan_bits && std::isnan(float_of(got)) && std::isnan(float_of(want));
  };
  for (std::size_t k = 0; k < e.s.size(); ++k) {
    const i64 j = static_cast<i64>(k) % e.SC, i = (static_cast<i64>(k) / e.SC) % e.SR,
              b = static_cast<i64>(k) / (e.SC * e.SR);
    if (fp8q::stores_multiplier(S)) {
      const u32 want = e.s_written[k] ? e.s[k] : poison_f32;
      if (!same_f32(a.s[k], want)) {
        ++bad_s;
        if (shown++ < 12)
          os << "  s(" << b << "," << i << "," << j << "): got " << fstr(float_of(a.s[k])) << " want "
             << fstr(float_of(want)) << "\n";
      }
    }
    if (fp8q::stores_inverse(S)) {
      if (mx) {
        const u32 want = e.s_written[k] ? e.inv[k] : poison_byte;
        if (a.inv[k] != want) {
          ++bad_s;
          if (shown++ < 12)
            os << "  e8m0(" << b << "," << i << "," << j << "): got " << hex(a.inv[k], 2) << " want "
               << hex(want, 2) << "\n";
        }
      } else {
        const u32 want = e.s_written[k] ? e.inv[k] : poison_f32;
        if (!same_f32(a.inv[k], want)) {
          ++bad_s;
          if (shown++ < 12)
            os << "  inv(" << b << "," << i << "," << j << "): got " << fstr(float_of(a.inv[k]))
               << " want " << fstr(float_of(want)) << "\n";
        }
      }
    }
  }
  if (!a.outside.empty()) os << "  " << a.outside << "\n";
  if (bad_q || bad_s || !a.outside.empty()) {
    std::ostringstream head;
    head << bad_q << " of " << e.q.size() << " bytes and " << bad_s << " scale entries differ\n";
    return head.str() + os.str();
  }
  return {};
}

/// Properties of one run beyond byte equality with the reference, checked on the actual
/// results: "" when all hold. `covered` counts the elements the round-trip bound was applied to.
///  - saturate: every non-NaN code decodes to |v| <= max;
///  - f32 scales: s == fp8q::scale_from_amax(amax) bit for bit, with amax from an independent
///    loop, and the stored inverse == 1.0f / s; e8m0: code == fp8q::mx_scale_code(amax);
///  - round trip: |decode(q) - x*s| <= 2^-(m+1) |x*s| (nearest) or 2^-m |x*s| (stochastic)
///    whenever min_normal <= |x*s| <= max.
template <fp8q::spec S>
std::string check_properties(const problem& p, const expected& e, const actual& a, i64* covered = nullptr) {
  const fmt_desc d = desc(S.out);
  const bool stochastic = S.rounding == fp8q::rounding::stochastic;
  const double min_normal = std::ldexp(1.0, 1 - d.bias);
  const double bound = std::ldexp(1.0, -(d.mbits + (stochastic ? 0 : 1)));
  std::ostringstream os;
  int bad = 0;
  i64 n_covered = 0;
  for (std::size_t k = 0; k < e.s.size(); ++k) {
    if (!e.s_written[k]) continue;
    if constexpr (S.scale == fp8q::scale_format::e8m0) {
      const u32 want = fp8q::mx_scale_code<S.out>(e.amax[k], S.mx_rounding);
      if (a.inv[k] != want && bad++ < 8)
        os << "  e8m0 entry " << k << ": " << hex(a.inv[k], 2) << " but mx_scale_code(amax "
           << fstr(e.amax[k]) << ") = " << hex(want, 2) << "\n";
    } else {
      const float rule = fp8q::scale_from_amax(e.amax[k], static_cast<float>(d.max), S.eps.value(),
                                               S.power_of_2);
      if (fp8q::stores_multiplier(S)) {
        const bool ok = a.s[k] == bits_of(rule);
        if (!ok && bad++ < 8)
          os << "  s entry " << k << ": " << fstr(float_of(a.s[k])) << " but scale_from_amax(amax "
             << fstr(e.amax[k]) << ") = " << fstr(rule) << "\n";
      }
      if (fp8q::stores_inverse(S)) {
        const float inv = std::isnan(rule) ? canonical_nan() : 1.0f / rule;
        const bool ok = a.inv[k] == bits_of(inv);
        if (!ok && bad++ < 8)
          os << "  inverse entry " << k << ": " << fstr(float_of(a.inv[k])) << " but 1/s = "
             << fstr(inv) << "\n";
      }
    }
  }
  const ref_cfg c = ref_cfg_of<S>();
  for (i64 b = 0; b < p.B; ++b)
    for (i64 r = 0; r < p.M; ++r)
      for (i64 col = 0; col < p.N; ++col) {
        i64 i = 0, j = 0;
        if (!scale_index(c, p, r, col, i, j)) continue;
        const std::size_t qi = static_cast<std::size_t>((b * p.M + r) * p.N + col);
        const double v = ref_decode(S.out, a.q[qi]);
        if (S.overflow == fp8q::overflow::saturate && !std::isnan(v) && std::fabs(v) > d.max && bad++ < 8)
          os << "  q " << qi << " decodes to " << v << " beyond max\n";
        const float m = e.mult[static_cast<std::size_t>((b * e.SR + i) * e.SC + j)];
        const double y = mul_f32(p.at(b, r, col), m);
        if (!(std::fabs(y) >= min_normal && std::fabs(y) <= d.max)) continue;
        ++n_covered;
        if (!(std::fabs(v - y) <= bound * std::fabs(y)) && bad++ < 8)
          os << "  q(" << b << "," << r << "," << col << ") = " << hex(a.q[qi], 2) << " decodes to " << v
             << ", x*s = " << y << ": error beyond " << bound << " relative\n";
      }
  if (covered) *covered += n_covered;
  return bad == 0 ? std::string{} : std::to_string(bad) + " property violations\n" + os.str();
}

/// Everything one run needs and produces (the outputs stay alive for dequantization).
template <fp8q::spec S, class In>
struct run_result {
  fp8q::status st = fp8q::status::success;
  outputs<S> out;
  actual got;
};

inline fp8q::quantize_args args_of(const problem& p, std::uint64_t seed) {
  fp8q::quantize_args args;
  args.groups = {p.ends.data(), static_cast<i64>(p.ends.size())};
  args.seed = seed;
  return args;
}

/// Run host::quantize<S> on problem p stored as `in_cfg`, into poisoned outputs laid out as
/// `ocfg`, and read the results back in logical order.
template <fp8q::spec S, class In>
run_result<S, In> run_quantize(const problem& p, const view_cfg& in_cfg, const out_cfg& ocfg,
                               std::uint64_t seed = 0, unsigned threads = 1) {
  owned<In> in = make_input<In>(p, in_cfg);
  run_result<S, In> r;
  r.out = make_outputs<S>(p.B, p.M, p.N, static_cast<i64>(p.ends.size()), ocfg);
  fp8q::host::options opt;
  opt.threads = threads;
  r.st = fp8q::host::quantize<S, In>(in.v.as_const(), r.out.q, args_of(p, seed), opt);
  r.got = read_back<S>(r.out, p.B, p.M, p.N);
  return r;
}

template <fp8q::spec S, class In>
std::string describe_run(const problem& p, const view_cfg& in_cfg, const out_cfg& ocfg) {
  std::ostringstream os;
  os << "spec " << to_string(S.granularity) << "/" << desc(S.out).name << " in " << type_name<In>()
     << " shape " << p.B << "x" << p.M << "x" << p.N << " G=" << p.ends.size() << " input "
     << describe(in_cfg) << ", " << describe(ocfg) << ": ";
  return os.str();
}

/// Run and compare with the reference in one go: "" on success.
template <fp8q::spec S, class In>
std::string check_quantize(const problem& p, const view_cfg& in_cfg = {}, const out_cfg& ocfg = {},
                           std::uint64_t seed = 0, unsigned threads = 1) {
  const run_result<S, In> r = run_quantize<S, In>(p, in_cfg, ocfg, seed, threads);
  if (r.st != fp8q::status::success)
    return describe_run<S, In>(p, in_cfg, ocfg) + "status " + fp8q::to_string(r.st) +
           " (expected success)";
  const expected e = ref_quantize(ref_cfg_of<S>(), p, seed);
  const std::string d = compare<S>(e, r.got);
  return d.empty() ? d : describe_run<S, In>(p, in_cfg, ocfg) + d;
}

/// The factor dequantization multiplies unit k by, from the logical scales read back.
template <fp8q::spec S>
double dequant_factor(const actual& a, std::size_t k) {
  if constexpr (S.scale == fp8q::scale_format::e8m0) {
    return a.inv[k] == 0xff ? std::numeric_limits<double>::quiet_NaN()
                            : std::ldexp(1.0, static_cast<int>(a.inv[k]) - 127);
  } else if constexpr (fp8q::stores_inverse(S)) {
    return float_of(a.inv[k]);
  } else {
    return ref_inverse(float_of(a.s[k]));
  }
}

/// How dequantization rounds decode(q) * factor to Out.
enum class dq_rounding {
  through_f32,   // the product rounded to f32, then to Out (docs/semantics.md "Dequantization")
  once,          // the exact product rounded once to Out
};

/// Dequantize the outputs of run `r` into Out laid out as `cfg` and compare with
/// round(decode(q) * factor): "" on success. Elements outside every group must stay poisoned.
template <fp8q::spec S, class In, class Out>
std::string check_dequantize(const problem& p, const run_result<S, In>& r, const view_cfg& cfg,
                             unsigned threads = 1, dq_rounding how = dq_rounding::through_f32) {
  const Out poison = from_float<Out>(-12345.0f);
  owned<Out> o = make_owned<Out>(p.B, p.M, p.N, cfg, poison);
  fp8q::host::options opt;
  opt.threads = threads;
  const fp8q::status st = fp8q::host::dequantize<S, Out>(r.out.q, o.v, args_of(p, 0), opt);
  if (st != fp8q::status::success) return std::string("dequantize status ") + fp8q::to_string(st);
  const expected shape = ref_quantize(ref_cfg_of<S>(), p);  // which elements belong to a unit
  const ref_cfg c = ref_cfg_of<S>();
  std::ostringstream os;
  int bad = 0;
  for (i64 b = 0; b < p.B; ++b)
    for (i64 row = 0; row < p.M; ++row)
      for (i64 col = 0; col < p.N; ++col) {
        const std::size_t qi = static_cast<std::size_t>((b * p.M + row) * p.N + col);
        const float got = widen<Out>(o.v(b, row, col));
        const u32 got_bits = raw_bits(o.v(b, row, col));
        double want = widen<Out>(poison);
        if (shape.q_written[qi]) {
          // the unit of this element: find the scale entry the reference used
          i64 si = 0, sj = 0;
          scale_index(c, p, row, col, si, sj);
          const std::size_t k = static_cast<std::size_t>((b * shape.SR + si) * shape.SC + sj);
          const double prod = ref_decode(S.out, r.got.q[qi]) * dequant_factor<S>(r.got, k);
          want = how == dq_rounding::once ? round_to<Out>(prod)
                                          : round_to<Out>(static_cast<float>(prod));
        }
        // a NaN result is the canonical NaN narrowed to Out (docs/semantics.md "NaN codes")
        // (bits compared, so the sign of a zero counts)
        const bool same = std::isnan(want) ? got_bits == raw_bits(from_float<Out>(canonical_nan()))
                                           : got_bits == raw_bits(from_float<Out>(static_cast<float>(want)));
        if (!same && bad++ < 8)
          os << "  x'(" << b << "," << row << "," << col << "): got " << got << " want " << want
             << " (q " << hex(r.got.q[qi], 2) << ")\n";
      }
  const std::string outside = check_outside(o, "dequantized", raw_bits(poison));
  if (bad == 0 && outside.empty()) return {};
  return std::string("dequantize to ") + type_name<Out>() + " " + describe(cfg) + ": " +
         std::to_string(bad) + " values differ\n" + os.str() + outside;
}

// ---------------------------------------------------------------------------------------------
// property drivers

struct shape3 {
  i64 B, M, N;
};

/// Input storages: dense row-/column-major, padded leading dimension and batch stride.
inline std::vector<view_cfg> input_layouts() {
  using L = fp8q::layout;
  return {{L::row_major, 0, 0}, {L::col_major, 0, 0}, {L::row_major, 3, 5}, {L::col_major, 1, 7}};
}
/// Output storages (data, scale, inverse).
inline std::vector<out_cfg> output_layouts() {
  using L = fp8q::layout;
  return {{{L::row_major, 0, 0}, {L::row_major, 0, 0}, {L::row_major, 0, 0}},
          {{L::col_major, 2, 3}, {L::col_major, 1, 2}, {L::row_major, 2, 1}},
          {{L::row_major, 1, 0}, {L::col_major, 0, 0}, {L::col_major, 3, 0}}};
}

/// Random problems of the given shapes (groups: G offsets along the grouped axis, some empty).
template <class In>
problem random_problem(std::mt19937_64& rng, const shape3& sh, const gen_cfg& g,
                       fp8q::granularity gran, i64 groups) {
  problem p;
  p.B = sh.B;
  p.M = sh.M;
  p.N = sh.N;
  p.x = random_values<In>(rng, sh.B, sh.M, sh.N, g);
  if (gran == fp8q::granularity::group_row) p.ends = random_offsets(rng, sh.N, groups);
  if (gran == fp8q::granularity::group_col) p.ends = random_offsets(rng, sh.M, groups);
  return p;
}

/// For every shape: one random problem, quantized from every input layout into several output
/// layouts; each run must equal the reference byte for byte (scales, untouched padding and
/// empty groups included) and satisfy check_properties; the first run is dequantized to f32
/// and compared exactly. "" on success, else the first failure.
template <fp8q::spec S, class In>
std::string props_run(std::mt19937_64& rng, const std::vector<shape3>& shapes, const gen_cfg& g = {},
                      i64 groups = 0, i64* covered = nullptr) {
  const std::vector<view_cfg> ins = input_layouts();
  const std::vector<out_cfg> outs = output_layouts();
  for (const shape3& sh : shapes) {
    const problem p = random_problem<In>(rng, sh, g, S.granularity, groups);
    const std::uint64_t seed = rng();
    const expected e = ref_quantize(ref_cfg_of<S>(), p, seed);
    for (std::size_t a = 0; a < ins.size(); ++a) {
      for (std::size_t b = 0; b < outs.size(); ++b) {
        if (a != 0 && b != a % outs.size()) continue;  // every output layout from row-major input,
                                                       // one per other input layout
        const run_result<S, In> r = run_quantize<S, In>(p, ins[a], outs[b], seed);
        std::string d = r.st != fp8q::status::success
                            ? std::string("status ") + fp8q::to_string(r.st)
                            : compare<S>(e, r.got);
        if (d.empty() && a == 0 && b == 0) d = check_properties<S>(p, e, r.got, covered);
        if (d.empty() && a == 0 && b == 0) d = check_dequantize<S, In, float>(p, r, {fp8q::layout::col_major, 2, 1});
        if (!d.empty()) return describe_run<S, In>(p, ins[a], outs[b]) + d;
      }
    }
  }
  return {};
}

/// The same problem with options::threads 1, 4 and 0 (hardware concurrency): identical results,
/// equal to the reference; dequantization likewise. Use shapes of >= 2^18 elements so that the
/// host backend really starts threads.
template <fp8q::spec S, class In>
std::string threads_run(std::mt19937_64& rng, const shape3& sh, const gen_cfg& g = {}, i64 groups = 0) {
  const problem p = random_problem<In>(rng, sh, g, S.granularity, groups);
  const std::uint64_t seed = rng();
  const expected e = ref_quantize(ref_cfg_of<S>(), p, seed);
  for (unsigned t : {1u, 4u, 0u}) {
    const view_cfg in{t == 4 ? fp8q::layout::col_major : fp8q::layout::row_major, 0, 0};
    const run_result<S, In> r = run_quantize<S, In>(p, in, output_layouts()[t % 2], seed, t);
    std::string d = r.st != fp8q::status::success ? std::string("status ") + fp8q::to_string(r.st)
                                                  : compare<S>(e, r.got);
    if (d.empty()) d = check_dequantize<S, In, float>(p, r, {}, t);
    if (!d.empty()) return "threads " + std::to_string(t) + ": " + describe_run<S, In>(p, in, output_layouts()[t % 2]) + d;
  }
  return {};
}

}  // namespace fq

namespace fq {

// ---------------------------------------------------------------------------------------------
// small helpers for the hand-checked cases

/// The raw bytes of n FP8 values as ints (Catch prints them readably).
template <fp8q::format F>
std::vector<int> bytes(const fp8q::fp8<F>* p, std::size_t n) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = p[i].bits;
  return v;
}
/// The bit patterns of n floats.
inline std::vector<u32> f32_bits(const float* p, std::size_t n) {
  std::vector<u32> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = bits_of(p[i]);
  return v;
}
template <class T, std::size_t K>
void fill(T (&a)[K], T v) {
  for (auto& x : a) x = v;
}

}  // namespace fq
