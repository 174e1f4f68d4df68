// hetero_split: the DP over (stage, layers) with a per-stage option against a brute force over
// every layer split x every per-stage option, costed with the same stage models
// (hetero_split_objective, and independently evaluate_hetero_plan); incumbent, memory and budget.
#include "hetero/hetero_split.hpp"

#include <doctest/doctest.h>

#include <functional>
#include <memory>

#include "hetero/hetero_evaluate.hpp"
#include "hetero_fixtures.hpp"

using namespace hapmoe;
using hapmoe::testing::hetero_scenario;
using hapmoe::testing::hetero_stage;
using hapmoe::testing::small_moe_model;
using hapmoe::testing::two_type_cluster;
using nlohmann::json;

namespace {

// A fixed hetero pipeline (meshes and stage order) as a HeteroSplitProblem, built as
// hetero_search's split_entry does: per stage one option per recompute of `set`.
struct SplitFixture {
  Scenario s;
  PlanSpec plan;
  std::vector<Recompute> set;
  std::unique_ptr<HeteroModelCache> cache;
  HeteroSplitProblem prob;

  SplitFixture(Scenario scenario, PlanSpec p, std::vector<Recompute> recompute)
      : s(std::move(scenario)), plan(std::move(p)), set(std::move(recompute)) {
    cache = std::make_unique<HeteroModelCache>(s);
    prob.num_layers = s.model.num_layers;
    prob.links = hetero_stage_links(s.cluster, plan);
    prob.num_microbatches = num_microbatches(s.training, hetero_stage_mesh(plan, 0));
    for (int i = 0; i < plan.pp; ++i) {
      std::vector<StageOption> opts;
      for (Recompute r : set) {
        plan.stages[i].recompute = r;
        const Mesh mesh = hetero_stage_mesh(plan, i);
        opts.push_back({cache->get(mesh, plan.stages[i].group), mesh});
      }
      prob.options.push_back(std::move(opts));
    }
  }

  // The plan with this split and these options.
  PlanSpec with(const HeteroSplit& split) const {
    PlanSpec p = plan;
    for (int i = 0; i < p.pp; ++i) {
      p.stages[i].layers = split.layers[i];
      p.stages[i].recompute = set[split.option[i]];
    }
    return p;
  }
};

// Minimum of hetero_split_objective over every split (each stage >= 1 layer) and every option per
// stage; nullopt when nothing fits. Counts the feasible combinations in *feasible. margin > 0:
// only the splits whose every stage leaves that share of its memory free.
std::optional<HeteroSplit> brute_split(const HeteroSplitProblem& p, int* feasible = nullptr, double margin = 0) {
  const int pp = static_cast<int>(p.options.size());
  std::optional<HeteroSplit> best;
  std::vector<int> layers(pp), option(pp);
  std::function<void(int, int)> walk = [&](int i, int left) {
    if (i == pp) {
      if (left != 0) return;
      std::function<void(int)> opts = [&](int k) {
        if (k == pp) {
          SplitCounters c;
          const auto obj = hetero_split_objective(p, layers, option, &c);
          if (!obj) return;
          for (int i = 0, first = 0; i < pp && margin > 0; first += layers[i], ++i) {
            const StageOption& o = p.options[i][option[i]];
            if (!o.model->cost(i, first, layers[i], p.links[i], o.mesh).within_margin(margin)) return;
          }
          if (feasible) ++*feasible;
          if (!best || *obj < best->objective_s) best = HeteroSplit{layers, option, *obj};
          return;
        }
        for (option[k] = 0; option[k] < static_cast<int>(p.options[k].size()); ++option[k])
          opts(k + 1);
      };
      opts(0);
      return;
    }
    for (int n = 1; n <= left - (pp - 1 - i); ++n) {
      layers[i] = n;
      walk(i + 1, left - n);
    }
  };
  walk(0, p.num_layers);
  return best;
}

// H800 tp 1 dp 2 (one stage), then 910B tp 2 dp 1 (one stage).
PlanSpec two_stage_plan() {
  PlanSpec p;
  p.micro_batch_size = 1;
  p.stages = {hetero_stage(0, "h800-sxm", 1, 1, 2), hetero_stage(1, "ascend-910b", 1, 2, 1)};
  p.pp = 2;
  p.tp = 1, p.dp = 2;
  return p;
}

// H800 tp 1 dp 1 over two stages, then 910B tp 1 dp 2 (ep 2): the 910B micro-batch is halved.
PlanSpec three_stage_plan() {
  PlanSpec p;
  p.micro_batch_size = 2;
  p.stages = {hetero_stage(0, "h800-sxm", 1, 1, 1), hetero_stage(0, "h800-sxm", 1, 1, 1),
              hetero_stage(1, "ascend-910b", 1, 1, 2, 2)};
  p.pp = 3;
  p.tp = 1, p.dp = 1;
  return p;
}

const std::vector<Recompute> kBoth = {Recompute::kNone, Recompute::kFull};

// The grid's split problems: `layers` layers of the small MoE on two types of `gib` GiB, the two-
// or three-stage plan (which even / odd) at sequence length 1024 (which < 2) or 4096.
SplitFixture split_case(int layers, double gib, int which) {
  json model = small_moe_model();
  model["num_layers"] = layers;
  const Scenario s = hetero_scenario(model, two_type_cluster(gib, gib, 2), {}, which < 2 ? 1024 : 4096);
  return SplitFixture(s, which % 2 == 0 ? two_stage_plan() : three_stage_plan(), kBoth);
}

}  // namespace

TEST_CASE("hetero split: the DP equals the brute force over splits x options, roomy or binding") {
  int compared = 0, with_split = 0, with_full = 0, none_fit = 0;
  for (int layers : {4, 5, 7}) {
    for (double gib : {80.0, 7.0, 6.6, 6.4, 6.2, 6.0, 5.6, 5.2}) {
      for (int which = 0; which < 4; ++which) {
        CAPTURE(layers);
        CAPTURE(gib);
        CAPTURE(which);
        const SplitFixture f = split_case(layers, gib, which);
        SplitCounters k;
        HeteroSplitStatus status;
        const auto dp = best_hetero_split(f.prob, &k, &status);
        const auto brute = brute_split(f.prob);
        CHECK(!status.budget_reached);
        ++compared;
        REQUIRE(dp.has_value() == brute.has_value());
        if (!dp) {
          ++none_fit;
          CHECK(k.memory > 0);
          CHECK(k.min_shortfall_bytes > 0);
          continue;
        }
        ++with_split;
        CHECK(dp->objective_s == doctest::Approx(brute->objective_s).epsilon(1e-12));
        // The split it returns: layers sum to L, each stage >= 1, and its objective is the
        // reported one, by the same stage costs and by the plan evaluation.
        int sum = 0;
        for (int n : dp->layers) {
          CHECK(n >= 1);
          sum += n;
        }
        CHECK(sum == layers);
        REQUIRE(dp->option.size() == dp->layers.size());
        SplitCounters c;
        const auto obj = hetero_split_objective(f.prob, dp->layers, dp->option, &c);
        REQUIRE(obj);
        CHECK(*obj == doctest::Approx(dp->objective_s).epsilon(1e-12));
        auto ev = evaluate_hetero_plan(f.s, f.with(*dp));
        REQUIRE(ev.ok());
        CHECK(ev.value().metrics.fits_memory);
        CHECK(ev.value().metrics.iteration_time_s ==
              doctest::Approx(dp->objective_s).epsilon(1e-9));
        for (int o : dp->option) with_full += o == 1;
      }
    }
  }
  MESSAGE("hetero split problems: " << compared << ", with a split: " << with_split
                                    << ", none fits: " << none_fit
                                    << ", stages on full recompute: " << with_full);
  CHECK(with_split >= 10);
  CHECK(none_fit >= 1);
  CHECK(with_full >= 1);
}

TEST_CASE("hetero split within a memory margin: the DP equals the brute force over the splits within it") {
  int compared = 0, binds = 0, none_within = 0;
  for (int layers : {4, 5, 7}) {
    for (double gib : {80.0, 7.0, 6.6, 6.4, 6.2, 6.0, 5.6}) {
      for (int which = 0; which < 4; ++which) {
        for (double margin : {0.05, 0.2}) {
          CAPTURE(layers);
          CAPTURE(gib);
          CAPTURE(which);
          CAPTURE(margin);
          SplitFixture f = split_case(layers, gib, which);
          const auto any = brute_split(f.prob);
          const auto brute = brute_split(f.prob, nullptr, margin);
          f.prob.margin = margin;
          SplitCounters k;
          const auto dp = best_hetero_split(f.prob, &k);
          ++compared;
          REQUIRE(dp.has_value() == brute.has_value());
          if (any && !brute) ++none_within;
          if (!dp) continue;
          CHECK(dp->objective_s == doctest::Approx(brute->objective_s).epsilon(1e-12));
          binds += dp->objective_s > any->objective_s * (1 + 1e-12);
          // Every stage of the split it returns is within the margin.
          for (int i = 0, first = 0; i < static_cast<int>(dp->layers.size()); first += dp->layers[i], ++i) {
            const StageOption& o = f.prob.options[i][dp->option[i]];
            CHECK(o.model->cost(i, first, dp->layers[i], f.prob.links[i], o.mesh).within_margin(margin));
          }
        }
      }
    }
  }
  MESSAGE("hetero split problems with a margin: " << compared << ", the margin makes the best slower: " << binds
                                                  << ", none within it but one fits: " << none_within);
  CHECK(binds >= 1);
  CHECK(none_within >= 1);
}

TEST_CASE("hetero split: where only full recompute fits, the DP takes it and none alone fails") {
  json model = small_moe_model();
  model["num_layers"] = 5;
  int found = 0;
  for (double gib = 5.1; gib <= 8.0; gib += 0.05) {
    CAPTURE(gib);
    const Scenario s = hetero_scenario(model, two_type_cluster(gib, gib, 2), {}, 4096);
    const SplitFixture none(s, two_stage_plan(), {Recompute::kNone});
    const SplitFixture full(s, two_stage_plan(), {Recompute::kFull});
    const SplitFixture both(s, two_stage_plan(), kBoth);
    SplitCounters k0, k1, k2;
    const auto r_none = best_hetero_split(none.prob, &k0);
    const auto r_full = best_hetero_split(full.prob, &k1);
    const auto r_both = best_hetero_split(both.prob, &k2);
    CHECK(r_none.has_value() == brute_split(none.prob).has_value());
    // Both options: never worse than either alone; feasible exactly when one of them is.
    CHECK(r_both.has_value() == (r_none.has_value() || r_full.has_value()));
    if (r_both && r_none) CHECK(r_both->objective_s <= r_none->objective_s * (1 + 1e-12));
    if (r_both && r_full) CHECK(r_both->objective_s <= r_full->objective_s * (1 + 1e-12));
    if (!r_none && r_full) {
      // Memory binds: no split fits without recompute, so at least one stage of the DP's answer
      // recomputes, and the answer is the brute force's over both options.
      REQUIRE(r_both);
      int full_stages = 0;
      for (int o : r_both->option) full_stages += o == 1;
      CHECK(full_stages >= 1);
      CHECK(r_both->objective_s ==
            doctest::Approx(brute_split(both.prob)->objective_s).epsilon(1e-12));
      CHECK(k0.memory > 0);
      CHECK(k0.min_shortfall_bytes > 0);
      ++found;
    }
  }
  MESSAGE("memory sizes where only full recompute fits: " << found);
  CHECK(found >= 1);
}

TEST_CASE("hetero split: an incumbent is beaten or the result is nullopt") {
  json model = small_moe_model();
  model["num_layers"] = 6;
  int cases = 0;
  for (double gib : {80.0, 6.4}) {
    for (int which = 0; which < 2; ++which) {
      CAPTURE(gib);
      CAPTURE(which);
      const Scenario s = hetero_scenario(model, two_type_cluster(gib, gib, 2));
      SplitFixture f(s, which == 0 ? two_stage_plan() : three_stage_plan(), kBoth);
      const auto brute = brute_split(f.prob);
      REQUIRE(brute);
      const double best = brute->objective_s;
      for (double scale : {0.5, 0.999, 1.0, 1.000001, 1.01, 2.0}) {
        CAPTURE(scale);
        f.prob.incumbent_s = best * scale;
        SplitCounters k;
        const auto r = best_hetero_split(f.prob, &k);
        // Nullopt exactly when nothing is strictly below the incumbent.
        CHECK(r.has_value() == (best < f.prob.incumbent_s));
        if (r) CHECK(r->objective_s == doctest::Approx(best).epsilon(1e-12));
        if (scale < 1) CHECK(k.lower_bound > 0);  // the bound, not memory, cut everything
        ++cases;
      }
    }
  }
  CHECK(cases == 24);
}

TEST_CASE("hetero split: the work budget stops it with status.budget_reached") {
  json model = small_moe_model();
  model["num_layers"] = 7;
  const Scenario s = hetero_scenario(model, two_type_cluster());
  SplitFixture f(s, three_stage_plan(), kBoth);
  SplitCounters full_run;
  HeteroSplitStatus done;
  REQUIRE(best_hetero_split(f.prob, &full_run, &done));
  CHECK(!done.budget_reached);
  const long long needed = full_run.work();
  REQUIRE(needed > 4);
  for (long long budget : {1LL, 4LL, needed / 2}) {
    CAPTURE(budget);
    f.prob.max_stage_costs = budget;
    SplitCounters k;
    HeteroSplitStatus status;
    CHECK(!best_hetero_split(f.prob, &k, &status));
    CHECK(status.budget_reached);
    CHECK(!status.past_deadline);
    CHECK(k.work() >= budget);
    CHECK(k.work() < needed);
  }
  // A budget the run fits in changes nothing.
  f.prob.max_stage_costs = needed + 1;
  SplitCounters k;
  HeteroSplitStatus status;
  const auto r = best_hetero_split(f.prob, &k, &status);
  CHECK(!status.budget_reached);
  REQUIRE(r);
  CHECK(r->objective_s == doctest::Approx(brute_split(f.prob)->objective_s).epsilon(1e-12));
  // A deadline already past: stopped too (checked every 4096 transitions, so give it enough).
  json big = small_moe_model();
  big["num_layers"] = 64;
  SplitFixture g(hetero_scenario(big, two_type_cluster()), three_stage_plan(), kBoth);
  g.prob.deadline_s = -1;
  SplitCounters kd;
  HeteroSplitStatus late;
  CHECK(!best_hetero_split(g.prob, &kd, &late));
  CHECK(late.budget_reached);
  CHECK(late.past_deadline);
}

TEST_CASE("hetero split: objective of a fixed split, and no split for more stages than layers") {
  json model = small_moe_model();
  model["num_layers"] = 5;
  const Scenario s = hetero_scenario(model, two_type_cluster());
  const SplitFixture f(s, two_stage_plan(), kBoth);
  // By hand from the stage costs: T = sum c + (m - 1) max c + max tail.
  const std::vector<int> layers = {3, 2}, option = {0, 1};
  const StageOption& a = f.prob.options[0][0];
  const StageOption& b = f.prob.options[1][1];
  const StageCost c0 = a.model->cost(0, 0, 3, f.prob.links[0], a.mesh);
  const StageCost c1 = b.model->cost(1, 3, 2, f.prob.links[1], b.mesh);
  const double m = static_cast<double>(f.prob.num_microbatches);
  CHECK(f.prob.num_microbatches == 8);  // 16 / (dp0 2 x mbs 1)
  const double want = c0.per_microbatch_s() + c1.per_microbatch_s() +
                      (m - 1) * std::max(c0.per_microbatch_s(), c1.per_microbatch_s()) +
                      std::max(c0.tail_s(), c1.tail_s());
  SplitCounters k;
  const auto obj = hetero_split_objective(f.prob, layers, option, &k);
  REQUIRE(obj);
  CHECK(*obj == doctest::Approx(want).epsilon(1e-12));
  CHECK(k.stage_costs == 2);
  // Full recompute costs more time than none on the same stage.
  const auto none_obj = hetero_split_objective(f.prob, layers, {0, 0}, &k);
  REQUIRE(none_obj);
  CHECK(*none_obj < *obj);

  json one = small_moe_model();
  one["num_layers"] = 1;
  const SplitFixture tiny(hetero_scenario(one, two_type_cluster()), two_stage_plan(), kBoth);
  SplitCounters kt;
  CHECK(!best_hetero_split(tiny.prob, &kt));
  CHECK(kt.stage_costs == 0);
}
