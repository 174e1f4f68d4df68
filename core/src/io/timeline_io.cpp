#include "hapmoe/timeline_io.hpp"

#include <string>

#include "hapmoe/result_io.hpp"

namespace hapmoe {

using nlohmann::json;

json timeline_to_json(const PlanEvaluation& ev, const Timeline& t) {
  const size_t p = ev.stages.size();
  std::vector<std::string> kinds(p);
  std::vector<json> chunks(p, json::array()), mbs(p, json::array()), starts(p, json::array());
  std::vector<double> f_op(p, 0), b_op(p, 0), cf_op(p, 0), cb_op(p, 0);
  for (const TimelineOp& op : t.ops) {
    const size_t r = static_cast<size_t>(op.stage);
    const bool fwd = op.kind == OpKind::kForward;
    kinds[r] += static_cast<char>(op.kind);
    chunks[r].push_back(op.chunk);
    mbs[r].push_back(op.microbatch);
    starts[r].push_back(round_sig(op.start_s));
    (fwd ? f_op : b_op)[r] = op.end_s - op.start_s;
    (fwd ? cf_op : cb_op)[r] = op.comm_s;
  }
  json stages = json::array();
  for (size_t i = 0; i < p; ++i) {
    const StageCost& c = ev.stages[i];
    stages.push_back({{"stage", i},
                      {"gpu", ev.plan.stages[i].gpu},
                      {"forward_op_s", round_sig(f_op[i])},
                      {"backward_op_s", round_sig(b_op[i])},
                      {"forward_comm_op_s", round_sig(cf_op[i])},
                      {"backward_comm_op_s", round_sig(cb_op[i])},
                      {"kinds", kinds[i]},
                      {"chunks", std::move(chunks[i])},
                      {"microbatches", std::move(mbs[i])},
                      {"starts_s", std::move(starts[i])},
                      {"tail", {{"start_s", round_sig(t.pipeline_s)},
                                {"dp_s", round_sig(c.dp_s)},
                                {"optimizer_s", round_sig(c.optimizer_s)},
                                {"end_s", round_sig(t.pipeline_s + c.tail_s())}}}});
  }
  return {{"pipeline_s", round_sig(t.pipeline_s)},
          {"iteration_s", round_sig(t.iteration_s)},
          {"bubble_fraction", round_sig(t.bubble_fraction)},
          {"pacing_share", round_sig(t.pacing_share)},
          {"matches_cost_model", t.matches_cost_model},
          {"num_microbatches", ev.metrics.num_microbatches},
          {"vpp", ev.plan.vpp},
          {"stages", stages}};
}

}  // namespace hapmoe
