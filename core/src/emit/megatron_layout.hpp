// Megatron-LM flag values computed from a plan's layer split and the model's layer pattern
// (--pipeline-model-parallel-layout, --moe-layer-freq). No other emit file is needed, so the flag
// groups (megatron_args), the launch script (launch) and the command (megatron_emit) form a chain.
#pragma once

#include <string>
#include <vector>

#include "hapmoe/specs.hpp"

namespace hapmoe {

// --pipeline-model-parallel-layout for the plan's layer split ("" when Megatron's default even
// split matches). Stage i's layers are split over its vpp chunks as evenly as possible, earlier
// chunks taking the remainder; E (embedding) opens the first chunk, MTP layers and L (loss)
// close the last one (megatron.md §1.2 grammar).
std::string pipeline_layout(const ModelSpec& m, const PlanSpec& plan);

// "([0]*3+[1]*58)"-style --moe-layer-freq expression for a 0/1 layer pattern.
std::string moe_layer_freq_expression(const std::vector<int>& pattern);

}  // namespace hapmoe
