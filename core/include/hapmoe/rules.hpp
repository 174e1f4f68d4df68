// Megatron-LM validity rules (megatron.md §2) for the flags a plan emits. A plan that breaks one
// is reported with the rule's name and never costed; the search counts each rule's rejections.
#pragma once

#include <optional>
#include <string>

#include "hapmoe/specs.hpp"
#include "hapmoe/stage_cost.hpp"

namespace hapmoe {

struct RuleViolation {
  std::string rule;     // e.g. "batch_divisible"
  std::string message;  // what is wrong and what Megatron expects
  std::string field;    // plan field it concerns, e.g. "plan.ep"
};

// Rules that depend only on the mesh shape (checked before any stage placement or costing).
std::optional<RuleViolation> check_mesh_rules(const Scenario& s, const Mesh& mesh);
// Rules for the pipeline stages: GPU group capacity, scale-up domain, layer counts, uniform
// recompute (upstream flags are global), FP8 hardware.
std::optional<RuleViolation> check_stage_rules(const Scenario& s, const Mesh& mesh, const PlanSpec& plan);
// Both, for a complete plan.
std::optional<RuleViolation> check_plan_rules(const Scenario& s, const PlanSpec& plan);

Mesh mesh_of(const PlanSpec& plan);

}  // namespace hapmoe
