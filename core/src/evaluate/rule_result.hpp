// What a validity rule returns (rules.hpp, stack_rules.hpp; built by violation.hpp), apart from
// the rules themselves, so the rule files share it without including each other in a cycle.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace hapmoe {

struct RuleViolation {
  // e.g. "batch_divisible": always a string literal (a view, so that the enumerator, which counts
  // millions of rejections by name, allocates nothing for it).
  std::string_view rule;
  std::string message;  // what is wrong and what Megatron expects
  std::string field;    // plan field it concerns, e.g. "plan.ep"
};
using RuleResult = std::optional<RuleViolation>;

// While one is alive, the rules checked on this thread leave RuleViolation::message and ::field
// empty (for callers that only count rule names, such as the candidate enumerator: no text is
// built).
class RuleNamesOnly {
 public:
  RuleNamesOnly();
  ~RuleNamesOnly();
  RuleNamesOnly(const RuleNamesOnly&) = delete;
  RuleNamesOnly& operator=(const RuleNamesOnly&) = delete;

 private:
  bool was_;
};

}  // namespace hapmoe
