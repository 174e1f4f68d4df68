// Search driver: (mesh shape, group set) entries sorted by a lower bound that holds for every
// order and split; for each entry below the k-th best plan so far, a tighter bottleneck bound,
// then every distinct stage order with the exact layer-split DP against that incumbent.
#include "hapmoe/search.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <unordered_map>

#include "hapmoe/baselines.hpp"
#include "hapmoe/candidate_cost.hpp"
#include "hapmoe/candidate_space.hpp"
#include "hapmoe/diagnosis.hpp"
#include "hapmoe/layer_split_dp.hpp"
#include "hapmoe/rules.hpp"

namespace hapmoe {

std::string plan_key(const PlanSpec& p) {
  std::string k;
  for (int v : {p.tp, p.cp, p.pp, p.dp, p.ep, p.etp, p.vpp, p.micro_batch_size}) k += std::to_string(v) + ",";
  k += to_string(p.stages.empty() ? Recompute::kNone : p.stages[0].recompute);
  for (const auto& st : p.stages) k += "|" + std::to_string(st.group) + ":" + std::to_string(st.layers);
  return k;
}

namespace {

struct Ranked {
  double objective;
  std::string key;
  PlanEvaluation ev;
};

bool better(const Ranked& a, const Ranked& b) {
  return a.objective < b.objective || (a.objective == b.objective && a.key < b.key);
}

std::optional<Error> check_request(const Scenario& s) {
  if (s.search.mode == SearchMode::kHetero) {
    return Error{"unsupported", "search.mode \"hetero\" (a mesh per GPU type) is not implemented yet; use \"megatron\"",
                 "search.mode"};
  }
  if (!s.search.layer_split.empty()) {
    long long sum = 0;
    for (int x : s.search.layer_split) sum += x;
    if (sum != s.model.num_layers) {
      return Error{"bad_value", "layer_split adds up to " + std::to_string(sum) + ", the model has " +
                                    std::to_string(s.model.num_layers) + " layers",
                   "search.layer_split"};
    }
  }
  return std::nullopt;
}

// Per-layer times and parameter totals of each stage cost model, computed once.
class LayerTimesCache {
 public:
  LayerTimesCache(int num_layers) : num_layers_(num_layers) {}
  const GroupLayerTimes& get(const StageCostModel* m) {
    auto it = times_.find(m);
    if (it == times_.end()) it = times_.emplace(m, group_layer_times(*m, num_layers_)).first;
    return it->second;
  }

 private:
  int num_layers_;
  std::unordered_map<const StageCostModel*, GroupLayerTimes> times_;
};

// Builds the sorted (bound, shape, set) entries: every group set of every shape that passes the
// pipeline rules and the static memory bound.
struct EntryBuilder {
  const Scenario& s;
  const CandidateSpace& space;
  StageModelCache& cache;
  LayerTimesCache& times;
  const SearchBudget& budget;
  SearchStats& st;
  std::vector<GroupSet> sets;
  std::vector<SearchEntry> entries;
  double min_shortfall = -1;
  std::unordered_map<std::string, int> set_ids;

  int set_id(const GroupSet& g) {
    std::string key;
    for (int x : g.groups) key += std::to_string(x) + ",";
    auto [it, added] = set_ids.emplace(key, static_cast<int>(sets.size()));
    if (added) sets.push_back(g);
    return it->second;
  }

  void build() {
    std::vector<const GroupLayerTimes*> tv;
    std::vector<int> stages;
    for (size_t i = 0; i < space.shapes().size() && !st.budget_reached; ++i) {
      const MeshShape& shape = space.shapes()[i];
      space.for_each_group_set(
          shape,
          [&](const GroupSet& set) {
            if (static_cast<long long>(entries.size()) >= budget.max_entries) {
              st.budget_reached = true;
              return false;
            }
            Mesh mesh;
            std::string rule;
            if (!space.complete_mesh(shape, set, &mesh, &rule)) {
              ++st.pruned[rule];
              return true;
            }
            ++st.candidates;
            tv.clear();
            stages.clear();
            double dense = 0, expert = 0;
            for (int g : set.groups) {
              const StageCostModel* m = cache.get(mesh, g);
              tv.push_back(&times.get(m));
              stages.push_back(shape.stages_per_group[g]);
              dense = m->total_dense_params();
              expert = m->total_expert_params();
            }
            const double shortfall =
                static_memory_shortfall_bytes(s, mesh, set.groups, shape.stages_per_group, dense, expert);
            if (shortfall > 0) {
              ++st.pruned["memory_bound"];
              if (min_shortfall < 0 || shortfall < min_shortfall) min_shortfall = shortfall;
              return true;
            }
            const double bound = set_lower_bound_s(tv, stages, s.model.num_layers,
                                                   num_microbatches(s.training, mesh), mesh.vpp, true);
            entries.push_back({bound, static_cast<int>(i), set_id(set)});
            return true;
          },
          &st.pruned);
    }
    std::sort(entries.begin(), entries.end(), [](const SearchEntry& a, const SearchEntry& b) {
      return a.bound_s < b.bound_s || (a.bound_s == b.bound_s && (a.shape < b.shape || (a.shape == b.shape && a.set < b.set)));
    });
  }
};

}  // namespace

Expected<SearchResult> search_plans(const Scenario& s, const SearchControl& control, const SearchBudget& budget) {
  const auto start = std::chrono::steady_clock::now();
  if (auto e = check_request(s)) return *e;
  SearchResult r;
  SearchStats& st = r.stats;
  const CandidateSpace space(s, &st.pruned);
  StageModelCache cache(s);
  LayerTimesCache times(s.model.num_layers);
  EntryBuilder builder{s, space, cache, times, budget, st, {}, {}, -1, {}};
  builder.build();
  const std::vector<SearchEntry>& entries = builder.entries;
  if (control.progress) control.progress(0.0, 0);

  const size_t top_k = static_cast<size_t>(std::max(1, s.search.top_k));
  std::vector<Ranked> best;  // sorted, at most top_k
  SplitCounters counters;
  IncrementalSplit dp;
  auto threshold = [&]() { return best.size() < top_k ? 1e300 : best.back().objective; };
  const std::vector<int>& fixed = s.search.layer_split;
  std::vector<const GroupLayerTimes*> tv;
  std::vector<int> stages, caps;
  std::vector<GroupBoundTerms> terms;
  std::vector<std::vector<int>> options;
  size_t done = 0;
  for (const SearchEntry& e : entries) {
    if (control.cancel && control.cancel->load()) {
      st.cancelled = true;
      break;
    }
    if (control.progress && done % 64 == 0) control.progress(static_cast<double>(done) / entries.size(), st.evaluated);
    ++done;
    if (e.bound_s >= threshold()) {
      st.pruned["lower_bound"] += static_cast<long long>(entries.size() - done + 1);
      break;
    }
    const MeshShape& shape = space.shapes()[e.shape];
    const GroupSet& set = builder.sets[e.set];
    Mesh mesh;
    std::string rule;
    space.complete_mesh(shape, set, &mesh, &rule);
    tv.clear();
    stages.clear();
    caps.clear();
    for (int g : set.groups) {
      const StageCostModel* model = cache.get(mesh, g);
      tv.push_back(&times.get(model));
      stages.push_back(shape.stages_per_group[g]);
      caps.push_back(max_layers_in_memory(s, *model, mesh));
    }
    const long long m = num_microbatches(s.training, mesh);
    terms.clear();
    for (size_t i = 0; i < set.groups.size(); ++i) {
      terms.push_back(group_bound_terms(s, *cache.get(mesh, set.groups[i]), *tv[i], mesh));
    }
    const PositionBound positions(terms, mesh.pp, s.model.num_layers, m, mesh.vpp);
    std::vector<int> any(terms.size());
    for (size_t i = 0; i < any.size(); ++i) any[i] = static_cast<int>(i);
    options.assign(mesh.pp, any);
    const double tight = std::max(set_lower_bound_s(tv, stages, s.model.num_layers, m, mesh.vpp, false, &caps),
                                  positions.lower_bound_s(options));
    if (tight >= 1e300) {
      ++st.pruned["stage_memory_bound"];
      continue;
    }
    if (tight >= threshold()) {
      ++st.pruned["bottleneck_bound"];
      continue;
    }
    if (!fixed.empty() && *std::min_element(fixed.begin(), fixed.end()) < std::max(1, mesh.vpp)) {
      ++st.pruned["stage_layers_at_least_vpp"];
      continue;
    }
    // Bound of every order that starts with `prefix`: its positions hold their groups, the
    // positions after it any group still to place.
    auto index_of = [&](int g) {
      return static_cast<int>(std::lower_bound(set.groups.begin(), set.groups.end(), g) - set.groups.begin());
    };
    // Orders that start with `prefix`: its positions hold their groups, later positions any
    // group still to place.
    auto prefix_reaches = [&](const std::vector<int>& prefix, const std::vector<int>& rest) {
      std::vector<int> later;
      for (int g : rest) later.push_back(index_of(g));
      for (size_t i = 0; i < options.size(); ++i) {
        if (i < prefix.size()) options[i].assign(1, index_of(prefix[i]));
        else options[i] = later;
      }
      return positions.reaches(options, threshold());
    };
    // The layer-split DP runs stage by stage along the DFS over orders: a prefix's stages are
    // split once for every order that starts with it. A stage is pushed once its next link is
    // known, i.e. when the block after it is placed (or at the end of the pipeline).
    std::vector<const StageCostModel*> set_models;
    for (int g : set.groups) set_models.push_back(cache.get(mesh, g));
    dp.reset(mesh, s.model.num_layers, m, cheapest_layer_times(set_models, s.model.num_layers));
    std::vector<int> depths;
    auto push_until = [&](const std::vector<int>& stage_groups, int end) {
      const std::vector<StageLinks> links = stage_links(s.cluster, mesh.stage_gpus(), stage_groups);
      while (dp.depth() < end) {
        const int i = dp.depth();
        if (!dp.push(*set_models[index_of(stage_groups[i])], links[i], threshold(), &counters)) return false;
      }
      return true;
    };
    auto keep = [&](const std::vector<int>& prefix, const std::vector<int>& rest) {
      if (prefix_reaches(prefix, rest)) {
        ++st.pruned["order_bound"];
        return false;
      }
      depths.push_back(dp.depth());
      if (fixed.empty() && !push_until(prefix, static_cast<int>(prefix.size()) - 1)) {
        while (dp.depth() > depths.back()) dp.pop();
        depths.pop_back();
        ++st.pruned["order_split_bound"];
        return false;
      }
      return true;
    };
    auto leave = [&](const std::vector<int>&) {
      while (dp.depth() > depths.back()) dp.pop();
      depths.pop_back();
    };
    space.for_each_order(shape, set, keep, leave, [&](const std::vector<int>& stage_groups) {
      if (st.evaluated >= budget.max_orders || counters.stage_costs >= budget.max_stage_costs) {
        st.budget_reached = true;
        return false;
      }
      if (set.groups.size() > 1 && prefix_reaches(stage_groups, {})) {
        ++st.pruned["order_bound"];
        return true;
      }
      ++st.evaluated;
      std::optional<SplitResult> split;
      if (!fixed.empty()) {
        const SplitProblem p = make_split_problem(s, mesh, stage_groups, cache);
        const auto obj = split_objective(p, fixed, &counters);
        if (obj && *obj < threshold()) split = SplitResult{fixed, *obj};
      } else {
        const int start_depth = dp.depth();
        if (push_until(stage_groups, mesh.pp)) split = dp.best(threshold());
        while (dp.depth() > start_depth) dp.pop();
      }
      if (!split) return true;
      const SplitProblem p = make_split_problem(s, mesh, stage_groups, cache);
      PlanSpec plan = plan_of(mesh, s.cluster, stage_groups, split->layers);
      Ranked cand{split->objective_s, plan_key(plan), evaluate_split_problem(s, p, plan)};
      best.insert(std::upper_bound(best.begin(), best.end(), cand, better), std::move(cand));
      if (best.size() > top_k) best.pop_back();
      return true;
    });
    if (st.budget_reached) break;
  }
  if (control.progress) control.progress(1.0, st.evaluated);
  st.stage_costs = counters.stage_costs;
  st.pruned["stage_memory"] += counters.memory;
  st.pruned["lower_bound"] += counters.lower_bound;
  st.pruned["dominated_split"] += counters.dominated;
  for (auto& b : best) r.plans.push_back(std::move(b.ev));

  if (r.plans.empty()) {
    double shortfall = counters.min_shortfall_bytes;
    const double bound_shortfall = builder.min_shortfall;
    if (shortfall < 0 || (bound_shortfall >= 0 && bound_shortfall < shortfall)) shortfall = bound_shortfall;
    r.diagnosis = diagnose_no_plan(s, shortfall, st);
  } else if (s.search.baselines && fixed.empty() && !st.cancelled) {
    const double best_time = r.plans.front().metrics.iteration_time_s;
    const BaselineInputs in{space, builder.sets, entries, cache};
    if (auto u = uniform_baseline(s, in)) r.uniform = Baseline{*u, u->metrics.iteration_time_s / best_time};
    if (auto m = megatron_default_baseline(s, in)) {
      r.megatron_default = Baseline{*m, m->metrics.iteration_time_s / best_time};
    }
  }
  st.elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace hapmoe
