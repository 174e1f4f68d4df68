#include "search/top_plans.hpp"

#include <string>

#include "hapmoe/specs.hpp"

namespace hapmoe {

std::string plan_key(const PlanSpec& p) {
  std::string k;
  for (int v : {p.tp, p.cp, p.pp, p.dp, p.ep, p.etp, p.vpp, p.micro_batch_size}) k += std::to_string(v) + ",";
  k += p.ep_comm_overlap ? "o" : "-";
  k += "," + std::to_string(p.optimizer_offload_fraction);
  k += std::string(",") + dispatcher_name(p.dispatch) + flex_backend_name(p.dispatch) + "," + to_string(p.cuda_graphs);
  for (const StagePlan& st : p.stages) {
    k += "|" + std::to_string(st.group) + ":" + std::to_string(st.layers) + ":" + to_string(st.recompute);
    for (int v : {st.tp, st.cp, st.dp, st.ep, st.etp}) k += "," + std::to_string(v);
  }
  return k;
}

}  // namespace hapmoe
