// `hapmoe reproduce`: the cases built from the presets, the table built from any column list
// (ratios, geometric means), the paper's figures, and the computed gap reasons.
#include "hapmoe/reproduce.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "reproduce/paper_figures.hpp"
#include "hapmoe/planner.hpp"
#include "hapmoe/reproduce_io.hpp"
#include "reproduce/reproduce_reasons.hpp"
#include "test_scenarios.hpp"

using namespace hapmoe;
using nlohmann::json;

namespace {

std::vector<ReproduceCase> cases_of(const json& options) {
  auto c = paper_cases(options, testing::builtin_presets());
  REQUIRE_MESSAGE(c.ok(), c.error().field << ": " << c.error().message);
  return c.value();
}

// A column whose plan is ours' own uniform baseline, compared in the given direction.
ComparisonColumn uniform_column(bool column_over_ours) {
  ComparisonColumn c;
  c.id = "u";
  c.label = "U";
  c.column_over_ours = column_over_ours;
  c.run = [](const Scenario&, const SearchResult& r) {
    RowPlan p;
    if (r.uniform)
      p.plan = r.uniform->evaluation;
    else
      p.no_plan_reason = "none";
    return p;
  };
  return c;
}

}  // namespace

TEST_CASE("paper cases: models x Table 1 clusters with the paper's training setup") {
  const auto all = cases_of(json::object());
  CHECK(all.size() == paper_training_setups().size() * paper_clusters().size());
  CHECK(all.front().model == "mixtral-s");
  CHECK(all.back().model == "mixtral-l");
  const auto one = cases_of({{"models", {"mixtral-l"}}, {"clusters", {"32-2"}}});
  REQUIRE(one.size() == 1);
  const Scenario& s = one[0].scenario;
  CHECK(s.model.num_layers == 48);
  CHECK(s.training.global_batch_size == 512);
  CHECK(s.training.seq_length == 4096);
  CHECK(s.training.moe_token_dispatcher_type == Dispatcher::kAlltoall);
  CHECK(s.training.use_distributed_optimizer);
  CHECK(s.search.micro_batch_size == std::vector<int>{1});
  CHECK(s.cluster.total_gpus() == 32);
  CHECK(cases_of({{"models", {"mixtral-s"}}})[0].scenario.training.moe_token_dispatcher_type ==
        Dispatcher::kAllgather);
}

TEST_CASE("paper cases: bad options name the field") {
  const auto& p = testing::builtin_presets();
  CHECK(paper_cases({{"models", {"mixtral-x"}}}, p).error().field == "models[0]");
  CHECK(paper_cases({{"clusters", "16-1"}}, p).error().field == "clusters");
  CHECK(paper_cases({{"clusters", json::array()}}, p).error().field == "clusters");
  CHECK(paper_cases({{"model", {"mixtral-s"}}}, p).error().field == "model");
  CHECK(paper_cases(json::array(), p).error().code == "bad_type");
}

TEST_CASE(
    "ratios follow the column's direction; geometric means cover heterogeneous rows with a ratio") {
  const auto cases =
      cases_of({{"models", {"mixtral-s"}}, {"clusters", {"16-1-h", "16-1", "24-1"}}});
  const ReproduceResult r = reproduce(cases, {uniform_column(false), uniform_column(true)});
  REQUIRE(r.rows.size() == 3);
  CHECK_FALSE(r.rows[0].heterogeneous);
  CHECK(r.rows[1].heterogeneous);
  double log_sum = 0;
  for (size_t i = 1; i < 3; ++i) {
    const ReproduceRow& row = r.rows[i];
    REQUIRE(row.ours.plan);
    REQUIRE(row.cells[0].throughput_ratio);
    const double expect =
        row.ours.plan->metrics.tokens_per_s / row.cells[0].plan.plan->metrics.tokens_per_s;
    CHECK(*row.cells[0].throughput_ratio == doctest::Approx(expect));
    CHECK(*row.cells[0].throughput_ratio >= 1.0);
    CHECK(*row.cells[1].throughput_ratio == doctest::Approx(1 / expect));
    log_sum += std::log(expect);
  }
  REQUIRE(r.geomeans.size() == 2);
  const GeomeanCell& g = r.geomeans[0][0];
  CHECK(g.of == 2);
  CHECK(g.clusters == std::vector<std::string>({"16-1", "24-1"}));
  REQUIRE(g.value);
  CHECK(*g.value == doctest::Approx(std::exp(log_sum / 2)));
  CHECK(*r.geomeans[1][0].value == doctest::Approx(1 / *g.value));
  CHECK_FALSE(g.paper);
  CHECK(g.gap_reason.empty());
}

TEST_CASE("standard columns carry the paper's figures in our ratio's direction") {
  const auto cols = standard_columns();
  REQUIRE(cols.size() == 5);
  CHECK(cols[4].id == "hetero");
  CHECK_FALSE(cols[4].subset_of_ours);  // a mesh per GPU type lies outside upstream mode's space
  CHECK(cols[0].paper_geomean("mixtral-s")->value == doctest::Approx(1.67));
  CHECK(cols[0].paper_geomean("mixtral-l")->value == doctest::Approx(1.78));
  CHECK(cols[1].paper_geomean("mixtral-s")->value == doctest::Approx(1.67 / 1.45));
  CHECK(cols[1].paper_geomean("mixtral-l")->value == doctest::Approx(1.78 / 1.56));
  CHECK(cols[3].id == "even_split");
  CHECK(cols[3].paper_row("mixtral-s", "32-3")->value == doctest::Approx(1 / 0.56));
  CHECK_FALSE(cols[3].paper_row("mixtral-s", "16-1"));  // not in Table 3
  CHECK_FALSE(cols[2].paper_row);                       // the cluster-order uniform baseline: none
}

TEST_CASE("gap reasons: given beyond 30% or when a plan is missing, built from the plans") {
  const auto cases = cases_of({{"models", {"mixtral-s"}}, {"clusters", {"16-1"}}});
  const ReproduceResult r = reproduce(cases, {uniform_column(false)});
  ReproduceRow row = r.rows[0];
  ComparisonColumn col = uniform_column(false);
  ColumnCell cell = row.cells[0];
  const double ratio = *cell.throughput_ratio;
  cell.paper = PaperRatio{ratio * 1.2, "test"};
  CHECK(row_gap_reason(row, col, cell, cases[0].scenario).empty());
  cell.paper = PaperRatio{ratio / 2, "test"};
  const std::string more = row_gap_reason(row, col, cell, cases[0].scenario);
  CHECK(more.find("vs the paper's") != std::string::npos);
  CHECK(more.find("+100%") != std::string::npos);
  CHECK(more.find("ascend-910b") != std::string::npos);  // per-layer time per GPU type
  CHECK(more.find("inter-group link 12.5 GB/s") != std::string::npos);
  cell.paper = PaperRatio{ratio * 2, "test"};
  CHECK(row_gap_reason(row, col, cell, cases[0].scenario).find("-50%") != std::string::npos);
  cell.plan.plan.reset();
  cell.plan.no_plan_reason = "memory";
  CHECK(row_gap_reason(row, col, cell, cases[0].scenario) == "no ratio: U has no plan (memory)");
  cell.paper.reset();
  CHECK(row_gap_reason(row, col, cell, cases[0].scenario).empty());
}

TEST_CASE("plan facts and mesh differences") {
  PlanSpec a, b;
  b.tp = 8;
  b.ep = 4;
  CHECK(mesh_difference(a, b) == "tp 1 vs 8, ep 1 vs 4");
  CHECK(mesh_difference(a, a).empty());
  const auto cases = cases_of({{"models", {"mixtral-s"}}, {"clusters", {"16-1"}}});
  const auto s = search_plans(cases[0].scenario);
  REQUIRE(s.ok());
  const PlanEvaluation& md = s->megatron_default->evaluation;
  const PlanFacts f = plan_facts(md);
  CHECK(f.stage_imbalance > 1.05);  // even split over H800 and 910B stages
  CHECK(f.comm_share > 0);
  CHECK(f.comm_share < 1);
  const auto times = layer_time_by_gpu(md);
  REQUIRE(times.size() == 2);
  CHECK(times[0].first == md.plan.stages[0].gpu);
}
