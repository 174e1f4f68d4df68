// Internal: how a rule builds its RuleViolation (one place), shared by rules.cpp and
// stack_rules.cpp.
#pragma once

#include <string>

#include "evaluate/rule_result.hpp"

namespace hapmoe::detail {

// True while a RuleNamesOnly is alive on this thread.
bool rule_names_only();

// message: builds the text (only when wanted).
template <class Message>
RuleResult violation(const char* rule, const char* field, Message&& message) {
  if (rule_names_only()) return RuleViolation{rule, std::string(), std::string()};
  return RuleViolation{rule, std::string(message()), field};
}

}  // namespace hapmoe::detail
