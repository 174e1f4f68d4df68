#include "hapmoe/profile.hpp"

namespace hapmoe {

std::vector<const char*> measured_term_names(unsigned terms) {
  static constexpr std::pair<unsigned, const char*> kNames[] = {
      {kTermForward, "forward_s"}, {kTermBackward, "backward_s"}, {kTermTpComm, "tp_comm_s"},
      {kTermEpComm, "ep_comm_s"},  {kTermDpComm, "dp_comm_s"}};
  std::vector<const char*> names;
  for (const auto& n : kNames) {
    if (terms & n.first) names.push_back(n.second);
  }
  return names;
}

const char* to_string(LayerKind k) { return k == LayerKind::kDense ? "dense" : "moe"; }

const char* to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllGather: return "all_gather";
    case CollectiveOp::kReduceScatter: return "reduce_scatter";
    case CollectiveOp::kAllToAll: return "all_to_all";
    default: return "all_reduce";
  }
}

const char* to_string(Placement p) {
  switch (p) {
    case Placement::kInterNode: return "inter_node";
    case Placement::kInterGroup: return "inter_group";
    default: return "intra_node";
  }
}

}  // namespace hapmoe
