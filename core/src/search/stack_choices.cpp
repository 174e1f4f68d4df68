#include "search/stack_choices.hpp"

namespace hapmoe {

std::vector<Dispatch> dispatch_choices(const Scenario& s) {
  const TrainingSpec& t = s.training;
  if (!s.model.is_moe()) return {Dispatch::kAlltoall};
  std::vector<Dispatch> backends;
  if (t.moe_flex_dispatcher_backend != FlexBackend::kHybridEp) backends.push_back(Dispatch::kDeepEp);
  if (t.moe_flex_dispatcher_backend != FlexBackend::kDeepEp) backends.push_back(Dispatch::kHybridEp);
  switch (t.moe_token_dispatcher_type) {
    case Dispatcher::kAllgather: return {Dispatch::kAllgather};
    case Dispatcher::kFlex: return backends;
    case Dispatcher::kAuto: backends.insert(backends.begin(), Dispatch::kAlltoall); return backends;
    default: return {Dispatch::kAlltoall};
  }
}

unsigned graph_default_modules(const Scenario& s, Dispatch) {
  if (!s.model.is_moe()) return 0;  // the whole layer
  const TrainingSpec& t = s.training;
  if (t.moe_expert_capacity_factor > 0 && t.moe_pad_expert_input_to_capacity) return kGraphAttn | kGraphMoe;
  // Dropping without padding leaves host copies in the alltoall preprocessing: router only.
  if (t.moe_expert_capacity_factor > 0) return kGraphAttn | kGraphMoeRouter;
  return kGraphAttn | kGraphMoeRouter | kGraphMoePreprocess;
}

std::vector<CudaGraphs> graph_choices(const Scenario& s, Dispatch d) {
  const TrainingSpec& t = s.training;
  auto with_modules = [&](GraphImpl impl) {
    CudaGraphs g{impl, 0};
    if (g.per_layer()) g.modules = t.cuda_graph_modules.value_or(graph_default_modules(s, d));
    return g;
  };
  if (t.cuda_graph_impl) return {with_modules(*t.cuda_graph_impl)};
  std::vector<CudaGraphs> out{CudaGraphs{}, with_modules(GraphImpl::kTransformerEngine)};
  if (!s.model.is_moe() || t.static_moe_shapes(d)) out.push_back({GraphImpl::kFullIteration, 0});
  return out;
}

}  // namespace hapmoe
