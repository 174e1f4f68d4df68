#include "search/baselines.hpp"

#include <algorithm>
#include <string>

#include "search/top_plans.hpp"

namespace hapmoe {

namespace {

Mesh entry_mesh(const BaselineInputs& in, const SearchEntry& e) {
  Mesh mesh;
  std::string_view rule;
  in.space.complete_mesh(in.space.shapes()[e.shape], in.sets[e.set], &mesh, &rule);
  return mesh;
}

// split_objective of `layers` on stage groups `groups` of `mesh` (what make_split_problem would
// pose), or nullopt once it exceeds `above` (split_objective_by): both callers skip a split above
// their pick. A stage's model and links are made only when it is costed: most entries end above
// the pick within a stage or two, and building every stage's links first was a third of the
// Megatron-default baseline.
std::optional<double> objective_unless_above(const Scenario& s, const Mesh& mesh, const std::vector<int>& groups,
                                             const std::vector<int>& layers, StageModelCache& cache, double above,
                                             std::vector<long long>& seen) {
  const long long stage_gpus = mesh.stage_gpus();
  seen.assign(s.cluster.groups.size(), 0);  // stages so far per group (as stage_links counts them)
  const StageCostModel* model = nullptr;
  StageLinks links;
  long long local = groups.empty() ? 0 : seen[groups[0]]++;
  auto cost_of = [&](int i, int first, int n) {  // stage i, after stage i - 1
    if (i == 0 || groups[i] != groups[i - 1]) model = cache.get(mesh, groups[i]);
    links.prev = links.next;
    links.next.reset();
    long long next_local = 0;
    if (static_cast<size_t>(i) + 1 < groups.size()) {
      next_local = seen[groups[i + 1]]++;
      links.next = stage_link(s.cluster, stage_gpus, groups[i], local, groups[i + 1], next_local);
    }
    local = next_local;
    return model->cost(i, first, n, links, mesh);
  };
  SplitCounters unused;
  return split_objective_by(layers, num_microbatches(s.training, mesh), mesh.vpp, &unused, cost_of, above);
}

}  // namespace

std::vector<int> gpu_types_by_count(const ClusterSpec& c) {
  std::vector<int> firsts;
  std::vector<long long> gpus;
  for (size_t g = 0; g < c.groups.size(); ++g) {
    size_t t = 0;
    while (t < firsts.size() && !(c.groups[firsts[t]].gpu == c.groups[g].gpu)) ++t;
    if (t == firsts.size()) {
      firsts.push_back(static_cast<int>(g));
      gpus.push_back(0);
    }
    gpus[t] += c.groups[g].gpus();
  }
  std::vector<size_t> order(firsts.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return gpus[a] > gpus[b]; });
  std::vector<int> out;
  for (size_t i : order) out.push_back(firsts[i]);
  return out;
}

int main_gpu_group(const ClusterSpec& c) {
  const std::vector<int> types = gpu_types_by_count(c);
  return types.empty() ? 0 : types.front();
}

ClusterSpec homogeneous_cluster_like(const ClusterSpec& c, int main) {
  ClusterSpec out = c;
  for (auto& g : out.groups) {
    g.gpu = c.groups[main].gpu;
    g.inter_node_gbps = c.groups[main].inter_node_gbps;
  }
  out.inter_group_gbps = c.groups[main].inter_node_gbps;
  return out;
}

namespace {
// Whether entry a comes before b: by bound, then shape, then set.
bool entry_before(const SearchEntry& a, const SearchEntry& b) {
  return a.bound_s < b.bound_s || (a.bound_s == b.bound_s && (a.shape < b.shape || (a.shape == b.shape && a.set < b.set)));
}
// A function object, not a function pointer: the heap calls it for every comparison, and through
// a pointer each of them was an indirect call (2.4% of the 8-type search natively).
struct EntryAfter {
  bool operator()(const SearchEntry& a, const SearchEntry& b) const { return entry_before(b, a); }
};
}  // namespace

void SortedEntries::assign(std::vector<SearchEntry> entries) {
  v_ = std::move(entries);
  sorted_ = 0;
  // Seen back to front, v_ is a heap whose top is the first entry (std heaps keep the greatest
  // on top, hence EntryAfter).
  std::make_heap(v_.rbegin(), v_.rend(), EntryAfter());
}

const SearchEntry& SortedEntries::operator[](size_t i) const {
  while (sorted_ <= i) {
    // Moves the heap's top (the next entry in order) to v_[sorted_], the heap's end seen back to front.
    std::pop_heap(v_.rbegin(), v_.rend() - static_cast<std::ptrdiff_t>(sorted_), EntryAfter());
    ++sorted_;
  }
  return v_[i];
}

std::optional<PlanEvaluation> uniform_baseline(const Scenario& s, const BaselineInputs& in) {
  std::optional<PlanEvaluation> best;
  double best_obj = 1e300;
  std::string best_key;
  std::vector<long long> seen;
  std::vector<int> groups, layers;  // per entry, in buffers kept across entries
  for (size_t i = 0; i < in.entries.size(); ++i) {
    const SearchEntry& e = in.entries[i];
    if (e.bound_s > best_obj) break;  // the bound holds for every order and split
    const Mesh mesh = entry_mesh(in, e);
    stage_groups_in_cluster_order(in.sets[e.set].groups, in.space.shapes()[e.shape].stages_per_group(), &groups);
    even_split(s.model.num_layers, mesh.pp, &layers);
    const auto obj = objective_unless_above(s, mesh, groups, layers, in.cache, best_obj, seen);
    if (!obj || *obj > best_obj) continue;
    PlanSpec plan = plan_of(mesh, s.cluster, groups, layers);
    std::string key = plan_key(plan);
    if (*obj == best_obj && key >= best_key) continue;  // the key only breaks exact ties
    best_obj = *obj;
    best_key = std::move(key);
    best = evaluate_split_problem(s, make_split_problem(s, mesh, groups, in.cache), plan);
  }
  return best;
}

std::optional<PlanEvaluation> megatron_default_baseline(const Scenario& s, const BaselineInputs& in) {
  Scenario blind = s;
  blind.cluster = homogeneous_cluster_like(s.cluster, main_gpu_group(s.cluster));
  StageModelCache blind_cache(blind, in.cache);  // the main GPU type's models are the search's
  std::optional<PlanEvaluation> pick;
  double pick_blind = 1e300;
  std::string pick_key;
  std::vector<long long> seen;
  std::vector<int> groups, layers;  // per entry, in buffers kept across entries
  // Any order gives the same pick: the least (blind objective, plan key).
  for (const SearchEntry& e : in.entries.any_order()) {
    if (in.sets[e.set].groups.size() != s.cluster.groups.size()) continue;  // all groups, as Megatron would
    const Mesh mesh = entry_mesh(in, e);
    stage_groups_in_cluster_order(in.sets[e.set].groups, in.space.shapes()[e.shape].stages_per_group(), &groups);
    even_split(s.model.num_layers, mesh.pp, &layers);
    const auto blind_obj = objective_unless_above(blind, mesh, groups, layers, blind_cache, pick_blind, seen);
    if (!blind_obj || *blind_obj > pick_blind) continue;
    const SplitProblem p = make_split_problem(s, mesh, groups, in.cache);
    SplitCounters k;
    const auto real = split_objective(p, layers, &k);
    if (!real) continue;
    PlanSpec plan = plan_of(mesh, s.cluster, groups, layers);
    std::string key = plan_key(plan);
    if (*blind_obj == pick_blind && pick && key >= pick_key) continue;
    pick = evaluate_split_problem(s, p, plan);
    pick_blind = *blind_obj;
    pick_key = std::move(key);
  }
  return pick;
}

}  // namespace hapmoe
