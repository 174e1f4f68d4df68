// The planner: what `hapmoe plan`, `evaluate` and `timeline` call. The one reader of search.mode.
// It runs the engines (the upstream search, hapmoe/search.hpp; the hetero search,
// hetero/hetero_search.hpp), which never call each other, and composes their results:
//   "megatron"  the upstream engine's plans, baselines and notes;
//   "hetero"    the hetero engine's plans, then (with search.baselines) the best upstream plan,
//               whose baselines and gain are rebased onto hetero's first plan;
//   "auto"      both engines' plans ranked together by iteration time (upstream first on ties),
//               each labelled with plan.runtime; the upstream baselines rebased onto the first
//               plan, and the best upstream plan as `upstream` when a FlagScale plan is first.
// Every call shares one SearchBudget; stats.elapsed_ms is the whole call's.
#pragma once

#include "hapmoe/evaluate.hpp"
#include "hapmoe/search.hpp"

namespace hapmoe {

Expected<SearchResult> search_plans(const Scenario& s, const SearchControl& control = {},
                                    const SearchBudget& budget = {});

// The runtime that runs `plan` in scenario `s`: plan.runtime when given; else FlagScale when a
// stage carries its own mesh or search.mode is "hetero", upstream Megatron-LM otherwise.
Runtime plan_runtime(const Scenario& s, const PlanSpec& plan);

// Checks the rules of plan_runtime's runtime and costs the plan (evaluate_upstream_plan or
// evaluate_hetero_plan); an Error "rule:<name>" for a violation, "non_finite" when a term came
// out infinite or NaN, "bad_value" for plan.runtime "megatron" with per-stage meshes.
Expected<PlanEvaluation> evaluate_plan(const Scenario& s, const PlanSpec& plan);

// If a node fails: one group's loss of a node, and the best plan without it.
struct NodeLoss {
  int group = 0;       // index in the original cluster
  int nodes_left = 0;  // that group's nodes after the loss (0: the group is gone)
  Scenario scenario;   // the reduced cluster's scenario, searched (group indices are its own)
  std::optional<PlanEvaluation> best;  // its first plan (search_plans' order), if any fits
  std::string message;                 // without one: why
  bool budget_reached = false;
};
struct NodeLossResult {
  PlanEvaluation selected;       // the plan as given, evaluated on the full cluster
  std::vector<NodeLoss> losses;  // one per group the plan uses, in group order
  double elapsed_ms = 0;
  bool cancelled = false;
};

// `s` with one node of `group` removed (the group itself when it has one node), no plan.
Scenario without_one_node(const Scenario& s, int group);

// The N-1 re-plan of `plan`: for every group it uses, search_plans on the cluster minus one node
// of that group (fresh searches, sharing one `budget` for the whole call; progress over all of
// them).
Expected<NodeLossResult> plan_after_node_loss(const Scenario& s, const PlanSpec& plan,
                                              const SearchControl& control = {}, const SearchBudget& budget = {});

}  // namespace hapmoe
