// `hapmoe plan`: search over mesh shapes (TP, CP, EP, ETP, micro-batch, VPP, recompute, DP),
// GPU-type stage placement and order, and the exact layer split (layer_split_dp.hpp). Returns
// the top-k distinct plans, the baselines, counters per pruning rule, and a diagnosis when
// nothing fits.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "hapmoe/error.hpp"
#include "hapmoe/evaluate.hpp"
#include "hapmoe/layer_split_dp.hpp"

namespace hapmoe {

struct SearchControl {
  std::function<void(double fraction, long long evaluated)> progress;  // called between meshes
  const std::atomic<bool>* cancel = nullptr;                            // checked in the loops
};

struct SearchStats {
  long long candidates = 0;  // (mesh, placement) combinations generated
  long long evaluated = 0;   // combinations whose layer split was searched
  long long stage_costs = 0;
  std::map<std::string, long long> pruned;  // rule name -> count
  double elapsed_ms = 0;
  bool cancelled = false;
};

struct Diagnosis {
  std::string message;
  double shortfall_gib = 0;
  std::vector<std::string> suggestions;
};

struct Baseline {
  PlanEvaluation evaluation;
  double speedup = 0;  // baseline iteration time / best plan's
};

struct SearchResult {
  std::vector<PlanEvaluation> plans;  // best first
  std::optional<Baseline> megatron_default;
  std::optional<Baseline> uniform;
  SearchStats stats;
  std::optional<Diagnosis> diagnosis;
};

// A mesh shape plus the GPU group of every pipeline stage.
struct Candidate {
  Mesh mesh;
  std::vector<int> stage_groups;
};

// Every candidate of the search space that passes the Megatron mesh rules, in the search's
// deterministic order. Rule rejections are counted into `pruned`.
std::vector<Candidate> enumerate_candidates(const Scenario& s, std::map<std::string, long long>* pruned);

// StageCostModels shared by every candidate with the same layer-level mesh fields and group.
class StageModelCache {
 public:
  explicit StageModelCache(const Scenario& s) : s_(s) {}
  const StageCostModel* get(const Mesh& mesh, int group);

 private:
  const Scenario& s_;
  std::map<int, ModelShape> shapes_;
  std::map<std::tuple<int, int, int, int, int, int, int>, std::unique_ptr<StageCostModel>> models_;
};

// The layer-split problem of one candidate: its stages' cost models, links and schedule sizes.
SplitProblem make_split_problem(const Scenario& s, const Candidate& c, StageModelCache& cache);

Expected<SearchResult> search_plans(const Scenario& s, const SearchControl& control = {});

// include_timing adds stats.elapsed_ms (off by default so that output is byte-identical).
nlohmann::json search_result_to_json(const Scenario& s, const SearchResult& r, bool include_timing = false);

// Stable identity of a plan, used for distinctness and tie-breaking.
std::string plan_key(const PlanSpec& p);

}  // namespace hapmoe
