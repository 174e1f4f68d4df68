// Baselines computed beside the search, so that the gain of its plan can be shown:
//  - uniform: the best plan whose layer split is even -- num_layers / pp layers per stage, the
//    first num_layers % pp stages one more -- with the GPU groups in the order the cluster lists
//    them (a rule that never looks at GPU speed); mesh and the set of groups used are searched.
//  - megatron_default: heterogeneity-blind -- the mesh chosen as if every GPU were the main type
//    (main_gpu_group) on a homogeneous fabric, all groups in cluster order, even split -- then
//    costed on the real GPUs (the best blind-ranked choice whose stages fit the real memory).
// The Metis-style baseline runs searches of its own: metis_baseline.hpp.
#pragma once

#include <optional>
#include <vector>

#include "search/candidate_cost.hpp"
#include "search/candidate_space.hpp"
#include "hapmoe/search_types.hpp"

namespace hapmoe {

// How each baseline is built, as the result states it.
inline constexpr const char* kUniformRule =
    "even layer split: num_layers / pp layers per stage, the first num_layers % pp stages one more; "
    "GPU groups in the order the cluster lists them; mesh and the groups used searched";
inline constexpr const char* kMegatronDefaultRule =
    "heterogeneity-blind: the mesh chosen as if every GPU were the main type (most GPUs) on a "
    "homogeneous fabric, all groups in cluster order, even layer split; then costed on the real GPUs";

// One group per GPU type (its first group; types compared by full spec), the type with the most
// GPUs first, the first-listed type first on ties.
std::vector<int> gpu_types_by_count(const ClusterSpec& c);
// The main GPU type's group: gpu_types_by_count(c).front().
int main_gpu_group(const ClusterSpec& c);
// The cluster as a heterogeneity-blind planner sees it: every group keeps its node shape but
// holds group `main`'s GPU and scale-out bandwidth; the inter-group link is that bandwidth too.
ClusterSpec homogeneous_cluster_like(const ClusterSpec& c, int main);

// One (mesh shape, group set) of the search with its lower bound (valid for every order and split).
struct SearchEntry {
  double bound_s;
  int shape;
  int set;
};

// The search's entries in order of bound, then shape, then set (a total order), sorted only as
// far as they are read: a binary heap holds the rest. Searches read a short prefix (the driver
// stops at the first entry whose bound reaches the k-th plan, the uniform baseline soon after;
// DeepSeek-V3 on 8 GPU types: 40k of 486k entries), so sorting all of them was wasted.
class SortedEntries {
 public:
  void assign(std::vector<SearchEntry> entries);
  size_t size() const { return v_.size(); }
  // The i-th entry in order (reading it sorts the entries up to it; earlier ones stay in place).
  const SearchEntry& operator[](size_t i) const;
  // Every entry once, in no particular order.
  const std::vector<SearchEntry>& any_order() const { return v_; }

 private:
  // v_[0, sorted_) in order; v_[sorted_, size) a heap read back to front (its first entry last).
  mutable std::vector<SearchEntry> v_;
  mutable size_t sorted_ = 0;
};

struct BaselineInputs {
  const CandidateSpace& space;
  const std::vector<GroupSet>& sets;
  const SortedEntries& entries;
  StageModelCache& cache;
};

std::optional<PlanEvaluation> uniform_baseline(const Scenario& s, const BaselineInputs& in);
std::optional<PlanEvaluation> megatron_default_baseline(const Scenario& s, const BaselineInputs& in);

}  // namespace hapmoe
