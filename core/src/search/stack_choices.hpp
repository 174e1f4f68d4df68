// The software-stack choices the search tries for every mesh shape: token dispatchers (alltoall,
// DeepEP, HybridEP) and CUDA graph settings, each fixed by the scenario's training fields when
// given, else the ones the GPUs and the model's token handling allow (stack_rules.hpp cuts the
// rest, counted by rule name).
#pragma once

#include <vector>

#include "hapmoe/specs.hpp"

namespace hapmoe {

// training.moe_token_dispatcher_type alltoall / allgather: that one; flex: the fixed backend, or
// DeepEP and HybridEP; auto: alltoall and both backends. A dense model needs none: alltoall.
std::vector<Dispatch> dispatch_choices(const Scenario& s);

// The CUDA graphs tried with dispatcher d: training.cuda_graph_impl / cuda_graph_modules when
// fixed (a fixed per-layer implementation without modules captures graph_default_modules); else
// none, Transformer Engine graphs of graph_default_modules, and full-iteration graphs where the
// MoE shapes are static (TrainingSpec::static_moe_shapes).
std::vector<CudaGraphs> graph_choices(const Scenario& s, Dispatch d);

// The parts a per-layer graph captures by default: a dense model's whole layer; an MoE model's
// attention, router and preprocessing (Megatron's MoE README recommendation for dropless MoE), or
// with padding to capacity its attention and whole MoE block.
unsigned graph_default_modules(const Scenario& s, Dispatch d);

}  // namespace hapmoe
