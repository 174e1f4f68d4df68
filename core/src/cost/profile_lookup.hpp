// Measured points as cost terms: layer compute time at a stage's shape and collective bus
// bandwidth at a message size, with the rule used when the query lies outside the points.
#pragma once

#include <functional>
#include <optional>

#include "hapmoe/hardware.hpp"
#include "hapmoe/profile.hpp"

namespace hapmoe {

// A layer's shape as the profile keys it.
struct LayerQuery {
  LayerKind kind = LayerKind::kMoe;
  int tp = 1, cp = 1, ep = 1, etp = 1;
  int micro_batch_size = 1;
  int seq_length = 0;
  double tokens() const { return static_cast<double>(micro_batch_size) * seq_length; }
};

struct LayerTimes {
  double fwd_s = 0, bwd_s = 0;
  bool extrapolated = false;  // outside the points: analytical shape scaled to the nearest one
};

// The analytical model's compute times of a layer of this shape (no recompute), used only for
// its shape: measured x analytical(query) / analytical(point).
using AnalyticalLayerFn = std::function<LayerTimes(const LayerQuery&)>;

// Layer compute times from the points of the query's kind, or nullopt when there are none.
// - Points with the query's (tp, cp, ep, etp): linear in tokens (micro_batch_size x seq_length)
//   between the two points around the query's tokens; beyond the first / last point,
//   that point scaled by the analytical shape (extrapolated).
// - Otherwise, when points differ from the query in one parallel size only and lie on both
//   sides of it: log-log in that size between the nearest one below and above.
// - Otherwise: the nearest point shape (sum of |log2| size ratios) scaled by the analytical
//   shape (extrapolated).
std::optional<LayerTimes> measured_layer_times(const GpuProfile& profile, const LayerQuery& q,
                                               const AnalyticalLayerFn& analytical);

struct Busbw {
  double gbps = 0;  // bus bandwidth, 1e9 bytes/s (nccl-tests' busbw)
  bool extrapolated = false;  // bytes outside the points, or no point with the query's ranks
};

// Bus bandwidth of `op` over `ranks` ranks at `placement` for a `bytes` message, or nullopt
// when the profile has no point of that op and placement. Points of the rank count nearest
// to `ranks` (|log2| ratio; equal distance: the larger) are used; log-log interpolation in
// bytes between them; below the smallest / above the largest size: that point's busbw
// (clamped, extrapolated).
std::optional<Busbw> measured_busbw(const GpuProfile& profile, CollectiveOp op, Placement placement,
                                    long long ranks, double bytes);

// A collective's link with the measured bus bandwidth (latency is inside busbw, so none is
// added), or nullopt without a point of that op and placement. ORs `term` into *measured, and
// into *extrapolated when the point was clamped. `profile` may be null.
// (The check is inline: StageCostModel::cost asks for every stage the DP prices, mostly without
// a profile.)
std::optional<Link> measured_link_of(const GpuProfile& profile, CollectiveOp op, Placement placement,
                                     long long ranks, double bytes, unsigned term, unsigned* measured,
                                     unsigned* extrapolated);
inline std::optional<Link> measured_link(const GpuProfile* profile, CollectiveOp op, Placement placement,
                                         long long ranks, double bytes, unsigned term, unsigned* measured,
                                         unsigned* extrapolated) {
  if (!profile || ranks <= 1) return std::nullopt;
  return measured_link_of(*profile, op, placement, ranks, bytes, term, measured, extrapolated);
}

}  // namespace hapmoe
