// fp8q — the host backend's engine: one loop nest for every granularity. The unit grid of the
// index map (detail/index_map.hpp) is cut into work items of at most 64 units; a work item finds
// the amax of each of its units, writes their scales, then casts their elements. Work items own
// disjoint units, so any number of threads gives the same bytes. Tensorwise scaling has one unit
// per matrix, so a small batch splits each matrix into chunks of lines instead (the max is exact
// and order-free, so the chunked amax is the same value).
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "fp8q/convert.hpp"
#include "fp8q/detail/index_map.hpp"
#include "fp8q/format.hpp"
#include "fp8q/host/detail/parallel.hpp"
#include "fp8q/scale.hpp"
#include "fp8q/spec.hpp"
#include "fp8q/validate.hpp"
#include "fp8q/views.hpp"

namespace fp8q::host::detail {

using fp8q::detail::scale_map;

// Units per work item: small enough for stack arrays, large enough to read whole cache lines
// when a unit is one column of a row-major matrix (64 bf16 = two 64-byte lines).
inline constexpr std::int64_t max_units = 64;

// Units [i0, i1) x [j0, j1) of batch item b.
struct work_item {
  std::int64_t b, i0, i1, j0, j1;
  std::int64_t units_j() const { return j1 - j0; }
};

// How the unit grid of a batch is cut into work items.
struct work_plan {
  std::int64_t batch = 0;
  std::int64_t units_i = 0, units_j = 0;
  std::int64_t step_i = 1, step_j = 1;
  std::int64_t tiles_i = 0, tiles_j = 0;

  std::int64_t count() const { return batch * tiles_i * tiles_j; }
  work_item item(std::int64_t k) const {
    const std::int64_t per_batch = tiles_i * tiles_j;
    const std::int64_t b = k / per_batch;
    const std::int64_t ti = (k % per_batch) / tiles_j;
    const std::int64_t tj = k % tiles_j;
    const std::int64_t i0 = ti * step_i;
    const std::int64_t j0 = tj * step_j;
    return {b, i0, i0 + step_i < units_i ? i0 + step_i : units_i, j0,
            j0 + step_j < units_j ? j0 + step_j : units_j};
  }
};

inline work_plan make_plan(const scale_map& m, std::int64_t batch) {
  work_plan p;
  p.batch = batch;
  p.units_i = m.rows.count();
  p.units_j = m.cols.count();
  if (p.units_i <= 0 || p.units_j <= 0 || batch <= 0) return p;
  p.step_j = p.units_j < max_units ? p.units_j : max_units;
  p.step_i = max_units / p.step_j;
  p.tiles_i = (p.units_i + p.step_i - 1) / p.step_i;
  p.tiles_j = (p.units_j + p.step_j - 1) / p.step_j;
  return p;
}

// Element (b, r, c) of a view lives at data[b * batch + r * row + c * col].
struct strides {
  std::int64_t batch, row, col;
};
template <class T>
strides strides_of(const matrix_view<T>& v) {
  const bool rm = v.order == layout::row_major;
  return {v.batch_stride, rm ? v.ld : 1, rm ? 1 : v.ld};
}

// The part of a matrix a call of for_each_run may touch: rows [r0, r1), columns [c0, c1).
struct clip {
  std::int64_t r0, r1, c0, c1;
};

// Calls run(u, du, r, c, len, along_cols) for every run of consecutive elements of the units of
// `w` inside `cl`: elements (r, c + k) when along_cols, else (r + k, c), for k in [0, len); the
// k-th element belongs to local unit u + k * du, where a unit's local index is
// (i - i0) * units_j + (j - j0). Runs follow the storage order the caller names (rows_outer for
// row-major data), so reads walk memory forwards. Where the units along the run are single
// lines (col, group_col, 32x1 blocks read by rows; row blocks read by columns), one run crosses
// many units (du != 0) instead of being cut into runs of one element.
template <class Run>
void for_each_run(const scale_map& m, const work_item& w, const clip& cl, bool rows_outer,
                  const Run& run) {
  const std::int64_t nj = w.units_j();
  const auto lo = [](std::int64_t a, std::int64_t b) { return a > b ? a : b; };
  const auto hi = [](std::int64_t a, std::int64_t b) { return a < b ? a : b; };
  if (rows_outer) {
    const bool single = m.cols.kind == fp8q::detail::axis_kind::uniform && m.cols.size == 1;
    for (std::int64_t i = w.i0; i < w.i1; ++i) {
      const std::int64_t rb = lo(m.rows.begin(i), cl.r0);
      const std::int64_t re = hi(m.rows.end(i), cl.r1);
      for (std::int64_t r = rb; r < re; ++r) {
        if (single) {  // unit j is column j
          const std::int64_t cb = lo(w.j0, cl.c0);
          const std::int64_t ce = hi(w.j1, cl.c1);
          if (ce > cb) run((i - w.i0) * nj + (cb - w.j0), std::int64_t{1}, r, cb, ce - cb, true);
          continue;
        }
        for (std::int64_t j = w.j0; j < w.j1; ++j) {
          const std::int64_t cb = lo(m.cols.begin(j), cl.c0);
          const std::int64_t ce = hi(m.cols.end(j), cl.c1);
          if (ce > cb) run((i - w.i0) * nj + (j - w.j0), std::int64_t{0}, r, cb, ce - cb, true);
        }
      }
    }
  } else {
    const bool single = m.rows.kind == fp8q::detail::axis_kind::uniform && m.rows.size == 1;
    for (std::int64_t j = w.j0; j < w.j1; ++j) {
      const std::int64_t cb = lo(m.cols.begin(j), cl.c0);
      const std::int64_t ce = hi(m.cols.end(j), cl.c1);
      for (std::int64_t c = cb; c < ce; ++c) {
        if (single) {  // unit i is row i
          const std::int64_t rb = lo(w.i0, cl.r0);
          const std::int64_t re = hi(w.i1, cl.r1);
          if (re > rb) run((rb - w.i0) * nj + (j - w.j0), nj, rb, c, re - rb, false);
          continue;
        }
        for (std::int64_t i = w.i0; i < w.i1; ++i) {
          const std::int64_t rb = lo(m.rows.begin(i), cl.r0);
          const std::int64_t re = hi(m.rows.end(i), cl.r1);
          if (re > rb) run((i - w.i0) * nj + (j - w.j0), std::int64_t{0}, rb, c, re - rb, false);
        }
      }
    }
  }
}

// amax[u] = fold of amax_combine over |x| of the unit's elements inside `cl`, on top of the
// values already there (start from 0.0f).
template <class In>
void fold_amax(const matrix_view<const In>& in,  // [B][M, N] In, any layout
               const scale_map& m, const work_item& w, const clip& cl,
               float* amax) {  // [units of w]
  const strides si = strides_of(in);
  const In* base = in.data + w.b * si.batch;
  for_each_run(m, w, cl, in.order == layout::row_major,
               [&](std::int64_t u, std::int64_t du, std::int64_t r, std::int64_t c,
                   std::int64_t len, bool along) {
                 const In* p = base + r * si.row + c * si.col;
                 const std::int64_t step = along ? si.col : si.row;
                 if (du == 0) {
                   float a = amax[u];
                   for (std::int64_t k = 0; k < len; ++k)
                     a = amax_combine(a, abs_value(to_float(p[k * step])));
                   amax[u] = a;
                 } else {
                   for (std::int64_t k = 0; k < len; ++k)
                     amax[u + k * du] = amax_combine(amax[u + k * du], abs_value(to_float(p[k * step])));
                 }
               });
}

// The multiplier applied before encoding, for one unit's raw amax; also the stored values.
template <spec S>
struct unit_scale {
  float multiplier;
  scale_t<S> scale;    // s (f32 specs)
  scale_t<S> inverse;  // 1/s, or the e8m0 code (MX)
};

template <spec S>
unit_scale<S> scale_of_unit(float raw_amax) {
  const float amax = canonical_amax(raw_amax);
  if constexpr (S.scale == scale_format::e8m0) {
    const std::uint8_t code = mx_scale_code<S.out>(amax, S.mx_rounding);
    return {mx_multiplier(code), e8m0fnu{code}, e8m0fnu{code}};
  } else {
    const float s = scale_from_amax(amax, traits(S.out).max, S.eps.value(), S.power_of_2);
    return {s, s, inverse_scale(s)};
  }
}

// Writes the stored scale(s) of every non-empty unit of `w` and fills mult[u].
template <spec S>
void finish_units(const quantized<S>& out,  // scales [B][scale extents] per S
                  const scale_map& m, const work_item& w, const float* amax,  // [units of w]
                  float* mult) {  // [units of w]
  for (std::int64_t i = w.i0; i < w.i1; ++i) {
    for (std::int64_t j = w.j0; j < w.j1; ++j) {
      if (m.unit_empty(i, j)) continue;
      const std::int64_t u = (i - w.i0) * w.units_j() + (j - w.j0);
      const unit_scale<S> us = scale_of_unit<S>(amax[u]);
      mult[u] = us.multiplier;
      const std::int64_t sr = m.scale_row(i, j);
      const std::int64_t sc = m.scale_col(i, j);
      if constexpr (stores_multiplier(S)) out.scale(w.b, sr, sc) = us.scale;
      if constexpr (stores_inverse(S)) out.inverse(w.b, sr, sc) = us.inverse;
    }
  }
}

// q = encode(x * mult[u]) for every element of the units of `w` inside `cl`.
// shift: null, or [groups] how far group g's lines move along the grouped axis in a padded
// output (validate.hpp's group_offsets::align); the grouped unit is constant along every run.
template <spec S, class In>
void cast_units(const matrix_view<const In>& in,  // [B][M, N] In, any layout
                const quantized<S>& out,          // data [B][M', N'] (padded: M' or N' larger)
                const scale_map& m, const work_item& w, const clip& cl,
                const float* mult,  // [units of w]
                std::uint64_t seed, const std::int64_t* shift = nullptr) {
  using data_t = fp8<S.out>;
  const strides si = strides_of(in);
  const strides so = strides_of(out.data);
  const In* in_base = in.data + w.b * si.batch;
  data_t* out_base = out.data.data + w.b * so.batch;
  [[maybe_unused]] const std::int64_t rows = in.rows;
  [[maybe_unused]] const std::int64_t cols = in.cols;
  for_each_run(
      m, w, cl, in.order == layout::row_major,
      [&](std::int64_t u, std::int64_t du, std::int64_t r, std::int64_t c, std::int64_t len,
          bool along) {
        const In* p = in_base + r * si.row + c * si.col;
        std::int64_t ro = r, co = c;
        if (shift != nullptr) {
          if constexpr (S.granularity == granularity::group_col) ro += shift[w.i0 + u / w.units_j()];
          if constexpr (S.granularity == granularity::group_row) co += shift[w.j0 + u % w.units_j()];
        }
        data_t* q = out_base + ro * so.row + co * so.col;
        const std::int64_t step_in = along ? si.col : si.row;
        const std::int64_t step_out = along ? so.col : so.row;
        const float* s = mult + u;
        if constexpr (S.rounding == rounding::stochastic) {
          const std::uint64_t first = fp8q::detail::element_index(w.b, r, c, rows, cols);
          const std::uint64_t step_index = along ? 1u : static_cast<std::uint64_t>(cols);
          for (std::int64_t k = 0; k < len; ++k) {
            const std::uint32_t bits =
                stochastic_bits(seed, first + static_cast<std::uint64_t>(k) * step_index);
            q[k * step_out] = quantize_value<S.out>(to_float(p[k * step_in]), s[k * du],
                                                    S.overflow, S.rounding, bits);
          }
        } else {
          for (std::int64_t k = 0; k < len; ++k)
            q[k * step_out] = quantize_value<S.out>(to_float(p[k * step_in]), s[k * du],
                                                    S.overflow, S.rounding, 0u);
        }
      });
}

// Round an f32 to the dequantization output type.
template <class Out>
Out narrow_to(float y) {
  if constexpr (std::is_same_v<Out, float>) {
    return y;
  } else if constexpr (std::is_same_v<Out, bf16>) {
    return to_bf16(y);
  } else {
    return to_f16(y);
  }
}

// The factor dequantization multiplies unit (i, j) by: the stored inverse (e8m0: 2^(code-127)),
// else 1/s from the stored multiplier.
template <spec S>
float inverse_of_unit(const quantized<S>& in, const scale_map& m, std::int64_t b, std::int64_t i,
                      std::int64_t j) {
  const std::int64_t sr = m.scale_row(i, j);
  const std::int64_t sc = m.scale_col(i, j);
  if constexpr (S.scale == scale_format::e8m0) {
    return decode(in.inverse(b, sr, sc));
  } else if constexpr (stores_inverse(S)) {
    return in.inverse(b, sr, sc);
  } else {
    return inverse_scale(in.scale(b, sr, sc));
  }
}

template <spec S, class Out>
void dequantize_units(const quantized<S>& in,  // data [B][M, N] any layout; scales per S
                      const matrix_view<Out>& out,  // [B][M, N] Out, any layout
                      const scale_map& m, const work_item& w, const clip& cl) {
  float inv[max_units];
  for (std::int64_t i = w.i0; i < w.i1; ++i)
    for (std::int64_t j = w.j0; j < w.j1; ++j)
      if (!m.unit_empty(i, j))
        inv[(i - w.i0) * w.units_j() + (j - w.j0)] = inverse_of_unit(in, m, w.b, i, j);
  using data_t = fp8<S.out>;
  const strides si = strides_of(in.data);
  const strides so = strides_of(out);
  const data_t* in_base = in.data.data + w.b * si.batch;
  Out* out_base = out.data + w.b * so.batch;
  for_each_run(m, w, cl, in.data.order == layout::row_major,
               [&](std::int64_t u, std::int64_t du, std::int64_t r, std::int64_t c,
                   std::int64_t len, bool along) {
                 const data_t* p = in_base + r * si.row + c * si.col;
                 Out* y = out_base + r * so.row + c * so.col;
                 const std::int64_t step_in = along ? si.col : si.row;
                 const std::int64_t step_out = along ? so.col : so.row;
                 const float* f = inv + u;
                 for (std::int64_t k = 0; k < len; ++k)
                   y[k * step_out] = narrow_to<Out>(canonical_nan(decode(p[k * step_in]) * f[k * du]));
               });
}

// A padded grouped output (group_offsets::align > 1): where each group's lines move, and the
// padding lines written as zeros after the groups' data.
struct padded_groups {
  std::vector<std::int64_t> shift;  // [groups] padded begin - begin; empty when not padded
  std::vector<std::int64_t> pend;   // [groups] padded end offsets

  template <spec S>
  static padded_groups of(const scale_map& m, const group_offsets& g) {
    padded_groups p;
    if (!fp8q::detail::is_grouped(S.granularity) || g.align <= 1) return p;
    const fp8q::detail::axis_map& a = S.granularity == granularity::group_col ? m.rows : m.cols;
    std::int64_t at = 0;
    for (std::int64_t k = 0; k < a.count(); ++k) {
      const std::int64_t size = a.end(k) - a.begin(k);
      p.shift.push_back(at - a.begin(k));
      at += (size + g.align - 1) / g.align * g.align;
      p.pend.push_back(at);
    }
    return p;
  }
  const std::int64_t* shift_or_null() const { return shift.empty() ? nullptr : shift.data(); }

  // Zero bytes in the padding lines of every group and batch item; the padded end offsets.
  template <spec S>
  void finish(const quantized<S>& out, const scale_map& m, const group_offsets& g) const {
    const bool along_rows = S.granularity == granularity::group_col;
    const fp8q::detail::axis_map& a = along_rows ? m.rows : m.cols;
    const std::int64_t other = along_rows ? out.data.cols : out.data.rows;
    for (std::int64_t b = 0; b < out.data.batch; ++b) {
      for (std::int64_t k = 0; k < a.count(); ++k) {
        for (std::int64_t x = a.end(k) + shift[static_cast<std::size_t>(k)]; x < pend[static_cast<std::size_t>(k)]; ++x) {
          for (std::int64_t y = 0; y < other; ++y) {
            (along_rows ? out.data(b, x, y) : out.data(b, y, x)) = fp8<S.out>{0};
          }
        }
      }
    }
    if (g.padded_ends != nullptr)
      for (std::size_t k = 0; k < pend.size(); ++k) g.padded_ends[k] = static_cast<std::int32_t>(pend[k]);
  }
};

// Tensorwise with fewer matrices than threads: chunks of lines (rows of a row-major input,
// columns of a column-major one) of one matrix at a time.
inline constexpr std::int64_t max_chunks = 256;

struct chunking {
  std::int64_t count;  // chunks per matrix
  std::int64_t lines;  // lines per chunk
  bool rows;           // chunks are row ranges (else column ranges)
  clip of(std::int64_t k, std::int64_t r, std::int64_t c) const {
    const std::int64_t lo = k * lines;
    const std::int64_t extent = rows ? r : c;
    const std::int64_t hi = lo + lines < extent ? lo + lines : extent;
    return rows ? clip{lo, hi, 0, c} : clip{0, r, lo, hi};
  }
};

inline chunking make_chunking(std::int64_t rows, std::int64_t cols, bool row_major,
                              unsigned threads) {
  const std::int64_t extent = row_major ? rows : cols;
  std::int64_t want = static_cast<std::int64_t>(threads) * 4;
  if (want > max_chunks) want = max_chunks;
  if (want > extent) want = extent;
  if (want < 1) want = 1;
  const std::int64_t lines = (extent + want - 1) / want;
  return {lines > 0 ? (extent + lines - 1) / lines : 0, lines, row_major};
}

template <class T>
std::int64_t element_count(const matrix_view<T>& v) {
  return v.rows * v.cols * v.batch;
}

// The whole quantization of a validated call.
template <spec S, class In>
void run_quantize(const matrix_view<const In>& in,  // [B][M, N] In, any layout
                  const quantized<S>& out,          // data [B][M, N]; scales per S
                  const quantize_args& args, unsigned requested_threads) {
  const scale_map m = fp8q::detail::make_scale_map(S, in.rows, in.cols, args.groups.ends,
                                                   args.groups.count);
  // A view with no elements writes no data (every unit is empty) and may have a null pointer
  // and any batch stride: no address is formed from it. Padded end offsets are still written.
  if (in.empty()) {
    const padded_groups pad = padded_groups::of<S>(m, args.groups);
    if (args.groups.padded_ends != nullptr)
      for (std::size_t k = 0; k < pad.pend.size(); ++k)
        args.groups.padded_ends[k] = static_cast<std::int32_t>(pad.pend[k]);
    return;
  }
  const work_plan p = make_plan(m, in.batch);
  if (p.count() == 0) return;
  const clip all{0, in.rows, 0, in.cols};
  const std::int64_t elements = element_count(in);
  const unsigned wide = resolve_threads(requested_threads, elements, elements);

  if (S.granularity == granularity::tensor && static_cast<std::int64_t>(wide) > p.count()) {
    const chunking ch = make_chunking(in.rows, in.cols, in.order == layout::row_major, wide);
    for (std::int64_t b = 0; b < in.batch; ++b) {
      const work_item w{b, 0, 1, 0, 1};
      if (m.unit_empty(0, 0)) continue;
      float partial[max_chunks];
      parallel_for(ch.count, wide, [&](std::int64_t k) {
        partial[k] = 0.0f;
        fold_amax(in, m, w, ch.of(k, in.rows, in.cols), &partial[k]);
      });
      float amax = 0.0f;
      for (std::int64_t k = 0; k < ch.count; ++k) amax = amax_combine(amax, partial[k]);
      float mult = 0.0f;
      finish_units(out, m, w, &amax, &mult);
      parallel_for(ch.count, wide, [&](std::int64_t k) {
        cast_units(in, out, m, w, ch.of(k, in.rows, in.cols), &mult, args.seed);
      });
    }
    return;
  }

  const padded_groups pad = padded_groups::of<S>(m, args.groups);
  const unsigned threads = resolve_threads(requested_threads, elements, p.count());
  parallel_for(p.count(), threads, [&](std::int64_t k) {
    const work_item w = p.item(k);
    float amax[max_units];
    float mult[max_units];
    for (std::int64_t u = 0; u < max_units; ++u) amax[u] = 0.0f;
    fold_amax(in, m, w, all, amax);
    finish_units(out, m, w, amax, mult);
    cast_units(in, out, m, w, all, mult, args.seed, pad.shift_or_null());
  });
  if (!pad.shift.empty()) pad.finish<S>(out, m, args.groups);
}

// The whole dequantization of a validated call.
template <spec S, class Out>
void run_dequantize(const quantized<S>& in,  // data [B][M, N]; scales per S
                    const matrix_view<Out>& out,  // [B][M, N] Out, any layout
                    const quantize_args& args, unsigned requested_threads) {
  if (in.data.empty()) return;  // nothing to write, and no address to form (run_quantize)
  const scale_map m = fp8q::detail::make_scale_map(S, in.data.rows, in.data.cols,
                                                   args.groups.ends, args.groups.count);
  const work_plan p = make_plan(m, in.data.batch);
  if (p.count() == 0) return;
  const std::int64_t elements = element_count(in.data);
  const unsigned wide = resolve_threads(requested_threads, elements, elements);
  if (S.granularity == granularity::tensor && static_cast<std::int64_t>(wide) > p.count()) {
    const chunking ch =
        make_chunking(in.data.rows, in.data.cols, in.data.order == layout::row_major, wide);
    parallel_for(p.batch * ch.count, wide, [&](std::int64_t k) {
      const work_item w{k / ch.count, 0, 1, 0, 1};
      dequantize_units(in, out, m, w, ch.of(k % ch.count, in.data.rows, in.data.cols));
    });
    return;
  }
  const clip all{0, in.data.rows, 0, in.data.cols};
  const unsigned threads = resolve_threads(requested_threads, elements, p.count());
  parallel_for(p.count(), threads,
               [&](std::int64_t k) { dequantize_units(in, out, m, p.item(k), all); });
}

}  // namespace fp8q::host::detail
