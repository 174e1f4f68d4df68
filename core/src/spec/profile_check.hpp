// A profile's layer points against the model and the GPU they claim to measure: a forward or
// backward time below what the layer's GEMMs need at the GPU's peak is not a measurement (it
// gave plans above 100% MFU). The profile section's own checks (bounds, repeated points) are
// in io/profile_io.hpp.
#pragma once

#include <optional>

#include "hapmoe/error.hpp"
#include "hapmoe/specs.hpp"

namespace hapmoe {

// Least forward time of one layer of `kind` on one GPU of peak `peak_flops_per_s` (FLOP/s), at
// a point's parallel sizes and tokens: the layer's GEMM FLOPs (attention projections, and the
// dense MLP or top-k routed experts plus the shared expert), 2 per parameter per token, over the
// point's tp x cp shard of the tokens (Megatron shards both sides so; EP does not divide them),
// at that peak. The backward's GEMMs are twice the forward's. Seconds.
double least_layer_forward_s(const ModelSpec& m, const LayerPoint& p, double peak_flops_per_s);

// The first layer point of s.profile faster than least_layer_forward_s allows on its GPU (the
// higher of its BF16 and FP8 dense peaks), as an error naming that point's field; nullopt when
// every point is possible.
std::optional<Error> check_profile_against_model(const Scenario& s);

}  // namespace hapmoe
