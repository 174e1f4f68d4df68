// If a node fails: the N-1 re-plan against fresh searches on the reduced clusters, and the
// checkpoint figures (Daly's interval and goodput by hand, the checkpoint size from the
// parameter count).
#include <doctest/doctest.h>

#include <cmath>

#include "evaluate/resilience.hpp"
#include "hapmoe/cost_memory.hpp"
#include "hapmoe/model_shape.hpp"
#include "hapmoe/planner.hpp"
#include "hapmoe/result_io.hpp"
#include "test_scenarios.hpp"

using namespace hapmoe;
using nlohmann::json;

namespace {

json two_group_doc() {
  json model = testing::small_moe_model();
  model["num_layers"] = 6;
  return {{"format", "hapmoe.scenario/1"},
          {"model", model},
          {"cluster",
           {{"name", "two"},
            {"groups",
             {{{"gpu", "h100-sxm"}, {"nodes", 2}, {"gpus_per_node", 4}, {"price_per_gpu_hour", 3}},
              {{"gpu", "a100-sxm-80gb"}, {"nodes", 1}, {"gpus_per_node", 4}, {"price_per_gpu_hour", 1.5}}}}}},
          {"training", {{"global_batch_size", 64}, {"seq_length", 2048}, {"checkpoint_write_gbps", 10}}},
          {"search", {{"top_k", 2}, {"tp", {1, 2}}, {"micro_batch_size", {1}}}}};
}

// A plan on both groups of two_group_doc: 2 stages of 4 GPUs on H100 nodes, 1 on the A100 node.
PlanSpec both_groups_plan(const Scenario& s) {
  PlanSpec plan;
  plan.pp = 3;
  plan.dp = 4;
  plan.ep = 4;
  for (int g : {0, 0, 1}) {
    StagePlan st;
    st.group = g;
    st.gpu = s.cluster.groups[g].gpu.id;
    st.layers = 2;
    plan.stages.push_back(st);
  }
  return plan;
}

}  // namespace

TEST_CASE("Daly's checkpoint interval and goodput, by hand") {
  // d = 60 s, M = 1 day: sqrt(2 d M) = 3219.94 s; x = d / 2M = 3.472e-4;
  // 3219.94 x (1 + sqrt(x)/3 + x/9) - 60 = 3180.06 s.
  CHECK(daly_interval_s(60, 86400) == doctest::Approx(3180.0621136));
  // R = 600 s: wall / useful = M e^(R/M) (e^((t + d)/M) - 1) / t = 1.04545.
  CHECK(daly_goodput(3180.0621136, 60, 86400, 600) == doctest::Approx(0.9565280446));
  // A write at least twice the MTBF: the interval is the MTBF.
  CHECK(daly_interval_s(200000, 86400) == doctest::Approx(86400));
  // Young's first-order sqrt(2 d M) for d << M.
  CHECK(daly_interval_s(1, 1e9) == doctest::Approx(std::sqrt(2e9) - 1).epsilon(1e-3));
}

TEST_CASE("a plan's checkpoint figures: size from the parameters, MTBF over the nodes used") {
  const Scenario s = testing::scenario_from(two_group_doc());
  auto r = search_plans(s);
  REQUIRE(r.ok());
  REQUIRE_FALSE(r->plans.empty());
  const PlanEvaluation& best = r->plans.front();
  const auto x = plan_resilience(s, best);
  REQUIRE(x.has_value());
  const double params = total_params(s.model, derive_model_shape(s.model, 1));
  CHECK(x->checkpoint_bytes == doctest::Approx(params * (kParamBytes + kOptimizerBytes)));  // 2 + 12 bytes
  CHECK(x->write_s == doctest::Approx(x->checkpoint_bytes / 10e9));
  long long nodes = 0;
  for (size_t g = 0; g < s.cluster.groups.size(); ++g) {
    nodes += (best.metrics.gpus_used_per_group[g] + 3) / 4;
  }
  CHECK(x->nodes == nodes);
  CHECK(x->job_mtbf_s == doctest::Approx(365.0 * 86400 / (1.4 * static_cast<double>(nodes))));
  CHECK(x->interval_s == doctest::Approx(daly_interval_s(x->write_s, x->job_mtbf_s)));
  CHECK(x->goodput > 0.9);
  CHECK(x->goodput < 1);
  CHECK(x->save_interval == std::llround(x->interval_s / best.metrics.iteration_time_s));
  // Without a write bandwidth: no figures.
  json doc = two_group_doc();
  doc["training"].erase("checkpoint_write_gbps");
  CHECK_FALSE(plan_resilience(testing::scenario_from(doc), best).has_value());
}

TEST_CASE("N-1 re-plans equal fresh searches on the reduced clusters") {
  for (const char* objective : {"time", "cost"}) {
    CAPTURE(objective);
    json doc = two_group_doc();
    doc["search"]["objective"] = objective;
    const Scenario s = testing::scenario_from(doc);
    auto r = plan_after_node_loss(s, both_groups_plan(s));
    REQUIRE(r.ok());
    REQUIRE(r->losses.size() == 2);  // both groups are used
    // Group 0 keeps one node; group 1 (one node) is gone.
    json fewer_h100 = doc;
    fewer_h100["cluster"]["groups"][0]["nodes"] = 1;
    json no_a100 = doc;
    no_a100["cluster"]["groups"].erase(1);
    for (size_t i = 0; i < 2; ++i) {
      const NodeLoss& loss = r->losses[i];
      CHECK(loss.group == static_cast<int>(i));
      CHECK(loss.nodes_left == (i == 0 ? 1 : 0));
      auto fresh = search_plans(testing::scenario_from(i == 0 ? fewer_h100 : no_a100));
      REQUIRE(fresh.ok());
      REQUIRE(loss.best.has_value() == !fresh->plans.empty());
      if (loss.best) {
        CHECK(loss.best->metrics.objective_value == doctest::Approx(fresh->plans.front().metrics.objective_value).epsilon(1e-12));
        CHECK(loss.best->metrics.gpus_used <= 8);  // what is left of the 12 GPUs
      }
    }
    const json out = node_loss_to_json(s, *r);
    CHECK(out["format"] == "hapmoe.node_loss/1");
    CHECK(out["losses"].size() == 2);
    CHECK(out["losses"][1]["group_removed"] == true);
    if (!out["losses"][0]["entry"].is_null()) {
      CHECK(out["losses"][0]["slowdown"].get<double>() > 0);
      CHECK(out["losses"][0]["entry"].contains("megatron"));
    }
  }
}

TEST_CASE("N-1 of a plan on a one-node cluster says there is no other node") {
  json doc = two_group_doc();
  doc["cluster"]["groups"].erase(0);
  const Scenario s = testing::scenario_from(doc);
  auto best = search_plans(s);
  REQUIRE(best.ok());
  REQUIRE_FALSE(best->plans.empty());
  auto r = plan_after_node_loss(s, best->plans.front().plan);
  REQUIRE(r.ok());
  REQUIRE(r->losses.size() == 1);
  CHECK_FALSE(r->losses[0].best.has_value());
  CHECK(r->losses[0].message.find("no other node") != std::string::npos);
}

TEST_CASE("checkpoint figures stay finite at the fields' extremes") {
  json doc = two_group_doc();
  doc["training"]["checkpoint_write_gbps"] = 0.01;       // the slowest write accepted
  doc["training"]["node_failures_per_year"] = 1000;      // the most failures accepted
  doc["training"]["restart_s"] = 86400;
  const Scenario slow = testing::scenario_from(doc);
  auto r = search_plans(slow);
  REQUIRE(r.ok());
  REQUIRE_FALSE(r->plans.empty());
  const auto x = plan_resilience(slow, r->plans.front());
  REQUIRE(x.has_value());
  CHECK(std::isfinite(x->interval_s));
  CHECK(x->goodput >= 0);
  CHECK(x->goodput < 0.05);  // writes about as long as the MTBF, day-long restarts: little gets done
  CHECK(x->save_interval >= 1);
  doc["training"]["checkpoint_write_gbps"] = 1e5;  // the fastest write, the fewest failures
  doc["training"]["node_failures_per_year"] = 0.001;
  doc["training"]["restart_s"] = 0;
  const Scenario fast = testing::scenario_from(doc);
  const auto y = plan_resilience(fast, r->plans.front());
  REQUIRE(y.has_value());
  CHECK(y->goodput > 0.99);
  CHECK(y->goodput <= 1);
  CHECK(y->save_interval >= 1);
  CHECK(y->save_interval <= 1000000000000000LL);
  const json out = evaluation_to_json(fast, r->plans.front());
  for (const auto& item : out["metrics"]["resilience"].items()) {  // no structured binding in CHECK (clang)
    const std::string key = item.key();
    CHECK_MESSAGE(!item.value().is_null(), key);
  }
}

TEST_CASE("N-1 re-plans share one work budget: a spent budget ends the later ones at once") {
  const Scenario s = testing::scenario_from(two_group_doc());
  // Enough orders for the first re-plan (group 0 down to one node) and 2 more.
  auto first = search_plans(without_one_node(s, 0));
  REQUIRE(first.ok());
  REQUIRE_FALSE(first->stats.budget_reached);
  SearchBudget tight;
  tight.max_orders = first->stats.work.orders + 2;
  auto r = plan_after_node_loss(s, both_groups_plan(s), {}, tight);
  REQUIRE(r.ok());
  REQUIRE(r->losses.size() == 2);
  CHECK_FALSE(r->losses[0].budget_reached);
  CHECK(r->losses[0].best.has_value());
  // Alone, the second re-plan needs more than 2 orders: it ends at the shared budget.
  auto second = search_plans(without_one_node(s, 1));
  REQUIRE(second.ok());
  REQUIRE(second->stats.work.orders > 2);
  CHECK(r->losses[1].budget_reached);
  for (const NodeLoss& loss : r->losses) {
    if (!loss.best) CHECK(loss.message.find("budget") != std::string::npos);
  }
}
