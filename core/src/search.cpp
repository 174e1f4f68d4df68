// Search driver: candidates sorted by a lower bound, exact layer-split DP per candidate against
// the k-th best plan so far, baselines, diagnosis.
#include "hapmoe/search.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <sstream>
#include <set>
#include <tuple>

#include "hapmoe/layer_split_dp.hpp"
#include "hapmoe/rules.hpp"

namespace hapmoe {


const StageCostModel* StageModelCache::get(const Mesh& mesh, int group) {
  const auto key = std::make_tuple(mesh.tp, mesh.cp, mesh.ep, mesh.etp, mesh.micro_batch_size,
                                   static_cast<int>(mesh.recompute), group);
  auto it = models_.find(key);
  if (it != models_.end()) return it->second.get();
  auto shape_it = shapes_.find(mesh.tp);
  if (shape_it == shapes_.end()) shape_it = shapes_.emplace(mesh.tp, derive_model_shape(s_.model, mesh.tp)).first;
  auto model = std::make_unique<StageCostModel>(s_, shape_it->second, mesh, group);
  const StageCostModel* ptr = model.get();
  models_.emplace(key, std::move(model));
  return ptr;
}

SplitProblem make_split_problem(const Scenario& s, const Candidate& c, StageModelCache& cache) {
  SplitProblem p;
  p.mesh = c.mesh;
  p.stage_models.reserve(c.stage_groups.size());
  for (size_t i = 0; i < c.stage_groups.size(); ++i) {  // stages of one group are contiguous
    const bool same = i > 0 && c.stage_groups[i] == c.stage_groups[i - 1];
    p.stage_models.push_back(same ? p.stage_models.back() : cache.get(c.mesh, c.stage_groups[i]));
  }
  p.links = stage_links(s.cluster, c.mesh.stage_gpus(), c.stage_groups);
  p.num_layers = s.model.num_layers;
  p.num_microbatches = num_microbatches(s.training, c.mesh);
  p.vpp = c.mesh.vpp;
  return p;
}

std::string plan_key(const PlanSpec& p) {
  std::string k;
  for (int v : {p.tp, p.cp, p.pp, p.dp, p.ep, p.etp, p.vpp, p.micro_batch_size}) k += std::to_string(v) + ",";
  k += to_string(p.stages.empty() ? Recompute::kNone : p.stages[0].recompute);
  for (const auto& st : p.stages) k += "|" + std::to_string(st.group) + ":" + std::to_string(st.layers);
  return k;
}

namespace {

PlanSpec make_plan(const Scenario& s, const Candidate& c, const std::vector<int>& layers) {
  PlanSpec p;
  p.tp = c.mesh.tp; p.cp = c.mesh.cp; p.pp = c.mesh.pp; p.dp = c.mesh.dp; p.ep = c.mesh.ep;
  p.etp = c.mesh.etp; p.vpp = c.mesh.vpp; p.micro_batch_size = c.mesh.micro_batch_size;
  p.sequence_parallel = c.mesh.sequence_parallel;
  for (size_t i = 0; i < layers.size(); ++i) {
    const int g = c.stage_groups[i];
    p.stages.push_back({s.cluster.groups[g].gpu.id, g, layers[i], c.mesh.recompute});
  }
  return p;
}

// Costs a plan whose stages are those of split problem p (same stage cost models).
PlanEvaluation evaluate_problem(const Scenario& s, const SplitProblem& p, const PlanSpec& plan) {
  std::vector<const StageCostModel*> models(s.cluster.groups.size(), nullptr);
  for (size_t i = 0; i < plan.stages.size(); ++i) models[plan.stages[i].group] = p.stage_models[i];
  return evaluate_with_models(s, plan, models);
}

std::vector<int> even_split(int layers, int stages) {
  std::vector<int> v(stages, layers / stages);
  for (int i = 0; i < layers % stages; ++i) v[i] += 1;
  return v;
}

// What the bounds need from a set of stage cost models (one per GPU type used), computed once
// per distinct set: the sum over layers of the cheapest per-micro-batch layer time, and the
// parameters of all layers on one GPU (they do not depend on the GPU type).
struct LayerTotals {
  double min_time_s = 0;
  double dense_params = 0, expert_params = 0;
};

class BoundCache {
 public:
  const LayerTotals& get(const std::vector<const StageCostModel*>& models, int num_layers) {
    auto it = totals_.find(models);
    if (it != totals_.end()) return it->second;
    LayerTotals t;
    for (int l = 0; l < num_layers; ++l) {
      double best = 1e300;
      for (const StageCostModel* m : models) {
        const LayerCost& c = m->layer(l);
        best = std::min(best, c.fwd_s + c.bwd_s + c.tp_s + c.cp_s + c.ep_s);
      }
      t.min_time_s += best;
      t.dense_params += models.front()->layer(l).dense_params;
      t.expert_params += models.front()->layer(l).expert_params;
    }
    return totals_.emplace(models, t).first->second;
  }

 private:
  std::map<std::vector<const StageCostModel*>, LayerTotals> totals_;
};

// m x (sum over layers of the cheapest per-micro-batch layer time) / pp: a lower bound on the
// iteration time of any split of this candidate (T >= m max c >= m sum c / pp).
double candidate_lower_bound(const Scenario& s, const Candidate& c, const LayerTotals& t) {
  return static_cast<double>(num_microbatches(s.training, c.mesh)) * t.min_time_s /
         static_cast<double>(c.mesh.pp);
}

// Weights, gradients and optimizer state of all layers must fit in the stages' free memory
// (with distributed-optimizer sharding, the most favourable case, so this stays a bound).
bool static_memory_fits(const Scenario& s, const Candidate& c, const LayerTotals& t, double* shortfall) {
  double room = 0;
  for (int g : c.stage_groups) {
    const GpuSpec& gpu = s.cluster.groups[g].gpu;
    room += (gpu.memory_gib - gpu.reserved_memory_gib) * kGiB;
  }
  const double need = weight_memory(t.dense_params, t.expert_params,
                                    static_cast<long long>(c.mesh.dp) * c.mesh.cp, c.mesh.expert_dp(), true)
                          .total();
  *shortfall = need - room;
  return need <= room;
}

struct Ranked {
  double objective;
  std::string key;
  PlanEvaluation ev;
};

bool better(const Ranked& a, const Ranked& b) {
  return a.objective < b.objective || (a.objective == b.objective && a.key < b.key);
}

Diagnosis diagnose(const Scenario& s, double shortfall_bytes, long long candidates) {
  Diagnosis d;
  d.shortfall_gib = std::max(0.0, shortfall_bytes / kGiB);
  if (candidates == 0) {
    d.message = "No mesh shape passes the Megatron-LM rules for this model, cluster and batch size.";
    d.suggestions = {"relax the search constraints (tp, pp, ep, cp, micro_batch_size lists)",
                     "choose a global_batch_size divisible by more data-parallel sizes",
                     "check that num_experts is divisible by the allowed ep values"};
    return d;
  }
  std::ostringstream o;
  o.precision(3);
  o << std::fixed << "No plan fits in GPU memory; the closest one is " << d.shortfall_gib
    << " GiB over on its fullest stage.";
  d.message = o.str();
  const auto& rc = s.search.recompute;
  if (!rc.empty() && std::find(rc.begin(), rc.end(), Recompute::kFull) == rc.end()) {
    d.suggestions.push_back("allow recompute \"full\"");
  }
  if (!s.search.micro_batch_size.empty() &&
      *std::min_element(s.search.micro_batch_size.begin(), s.search.micro_batch_size.end()) > 1) {
    d.suggestions.push_back("allow micro_batch_size 1");
  }
  if (!s.search.tp.empty() || !s.search.ep.empty() || !s.search.pp.empty()) {
    d.suggestions.push_back("allow higher tp, ep or pp (shards weights and activations further)");
  }
  d.suggestions.push_back("add GPUs, or use GPUs with more memory");
  if (!s.training.use_distributed_optimizer) d.suggestions.push_back("turn on use_distributed_optimizer");
  if (s.model.mtp_num_layers > 0) d.suggestions.push_back("fewer MTP layers");
  return d;
}

}  // namespace

Expected<SearchResult> search_plans(const Scenario& s, const SearchControl& control) {
  const auto start = std::chrono::steady_clock::now();
  if (s.search.mode == SearchMode::kHetero) {
    return Error{"unsupported", "search.mode \"hetero\" (a mesh per GPU type) is not implemented yet; use \"megatron\"",
                 "search.mode"};
  }
  if (!s.search.layer_split.empty()) {
    int sum = 0;
    for (int x : s.search.layer_split) sum += x;
    if (sum != s.model.num_layers) {
      return Error{"bad_value", "layer_split adds up to " + std::to_string(sum) + ", the model has " +
                                    std::to_string(s.model.num_layers) + " layers",
                   "search.layer_split"};
    }
  }
  SearchResult r;
  SearchStats& st = r.stats;
  const std::vector<Candidate> candidates = enumerate_candidates(s, &st.pruned);
  st.candidates = static_cast<long long>(candidates.size());
  StageModelCache cache(s);

  // Lower bounds and static memory first; then candidates in bound order.
  std::vector<std::pair<double, size_t>> order;
  double min_shortfall = -1;
  BoundCache bounds;
  std::vector<const StageCostModel*> models;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    models.clear();
    for (int g : c.stage_groups) {
      const StageCostModel* m = cache.get(c.mesh, g);
      if (std::find(models.begin(), models.end(), m) == models.end()) models.push_back(m);
    }
    std::sort(models.begin(), models.end());
    const LayerTotals& totals = bounds.get(models, s.model.num_layers);
    double shortfall = 0;
    if (!static_memory_fits(s, c, totals, &shortfall)) {
      ++st.pruned["memory_bound"];
      if (min_shortfall < 0 || shortfall < min_shortfall) min_shortfall = shortfall;
      continue;
    }
    order.emplace_back(candidate_lower_bound(s, c, totals), i);
  }
  std::sort(order.begin(), order.end());

  const size_t top_k = static_cast<size_t>(s.search.top_k);
  std::vector<Ranked> best;  // sorted, at most top_k
  SplitCounters counters;
  SplitScratch scratch;
  auto threshold = [&]() { return best.size() < top_k ? 1e300 : best.back().objective; };
  size_t done = 0;
  for (const auto& [lb, idx] : order) {
    if (control.cancel && control.cancel->load()) {
      st.cancelled = true;
      break;
    }
    if (control.progress && done % 64 == 0) control.progress(static_cast<double>(done) / order.size(), st.evaluated);
    ++done;
    if (lb >= threshold()) {
      st.pruned["lower_bound"] += static_cast<long long>(order.size() - done + 1);
      break;
    }
    const Candidate& c = candidates[idx];
    SplitProblem p = make_split_problem(s, c, cache);
    p.incumbent_s = threshold();
    p.scratch = &scratch;
    ++st.evaluated;
    std::optional<SplitResult> split;
    if (!s.search.layer_split.empty()) {
      const auto obj = split_objective(p, s.search.layer_split, &counters);
      if (obj && *obj < p.incumbent_s) split = SplitResult{s.search.layer_split, *obj};
    } else {
      split = best_layer_split(p, &counters);
    }
    if (!split) continue;
    PlanSpec plan = make_plan(s, c, split->layers);
    Ranked cand{split->objective_s, plan_key(plan), evaluate_problem(s, p, plan)};
    best.insert(std::upper_bound(best.begin(), best.end(), cand, better), std::move(cand));
    if (best.size() > top_k) best.pop_back();
  }
  if (control.progress) control.progress(1.0, st.evaluated);
  st.stage_costs = counters.stage_costs;
  st.pruned["stage_memory"] += counters.memory;
  st.pruned["lower_bound"] += counters.lower_bound;
  st.pruned["dominated_split"] += counters.dominated;
  for (auto& b : best) r.plans.push_back(std::move(b.ev));

  if (r.plans.empty()) {
    double shortfall = counters.min_shortfall_bytes;
    if (shortfall < 0 || (min_shortfall >= 0 && min_shortfall < shortfall)) shortfall = min_shortfall;
    r.diagnosis = diagnose(s, shortfall, st.candidates);
  } else if (s.search.baselines && s.search.layer_split.empty()) {
    const double best_time = r.plans.front().metrics.iteration_time_s;
    // Best plan with an even layer split (same space otherwise).
    std::optional<Ranked> uni;
    for (const auto& [lb, idx] : order) {
      if (uni && lb >= uni->objective) break;
      const Candidate& c = candidates[idx];
      SplitProblem p = make_split_problem(s, c, cache);
      const std::vector<int> layers = even_split(s.model.num_layers, c.mesh.pp);
      SplitCounters k;
      const auto obj = split_objective(p, layers, &k);
      if (!obj) continue;
      if (uni && *obj > uni->objective) continue;  // the key only breaks exact ties
      PlanSpec plan = make_plan(s, c, layers);
      Ranked cand{*obj, plan_key(plan), PlanEvaluation{}};
      if (!uni || better(cand, *uni)) {
        cand.ev = evaluate_problem(s, p, plan);
        uni = std::move(cand);
      }
    }
    if (uni) r.uniform = Baseline{uni->ev, uni->ev.metrics.iteration_time_s / best_time};

    // Megatron default, heterogeneity-blind: every group treated as the most common GPU type,
    // all groups in the order given, even split; the blind choice is then costed for real.
    ClusterSpec blind = s.cluster;
    int major = 0;
    for (size_t g = 0; g < s.cluster.groups.size(); ++g) {
      if (s.cluster.groups[g].gpus() > s.cluster.groups[major].gpus()) major = static_cast<int>(g);
    }
    for (auto& g : blind.groups) g.gpu = s.cluster.groups[major].gpu;
    Scenario blind_s = s;
    blind_s.cluster = blind;
    StageModelCache blind_cache(blind_s);
    std::optional<Ranked> pick;
    double pick_blind = 1e300;
    for (const auto& [lb, idx] : order) {
      const Candidate& c = candidates[idx];
      bool identity = c.stage_groups.size() > 0;
      for (size_t i = 1; i < c.stage_groups.size(); ++i) identity = identity && c.stage_groups[i] >= c.stage_groups[i - 1];
      std::set<int> used(c.stage_groups.begin(), c.stage_groups.end());
      if (!identity || used.size() != s.cluster.groups.size()) continue;
      const std::vector<int> layers = even_split(s.model.num_layers, c.mesh.pp);
      SplitCounters k;
      SplitProblem bp = make_split_problem(blind_s, c, blind_cache);
      const auto blind_obj = split_objective(bp, layers, &k);
      if (!blind_obj || *blind_obj > pick_blind) continue;
      SplitProblem p = make_split_problem(s, c, cache);
      const auto real = split_objective(p, layers, &k);
      if (!real) continue;
      PlanSpec plan = make_plan(s, c, layers);
      if (*blind_obj == pick_blind && pick && plan_key(plan) >= pick->key) continue;
      pick = Ranked{*real, plan_key(plan), evaluate_problem(s, p, plan)};
      pick_blind = *blind_obj;
    }
    if (pick) r.megatron_default = Baseline{pick->ev, pick->ev.metrics.iteration_time_s / best_time};
  }
  st.elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace hapmoe
