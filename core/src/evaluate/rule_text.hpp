// What each rule and search counter means, in a user's words, and the scenario fields it
// depends on ("cluster.groups[].x": that field of every group). One table next to the rules, so
// the result carries the sentence (the page and the CLI hold no copy of it).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hapmoe {

struct RuleText {
  std::string_view rule;
  std::string_view sentence;
  std::vector<std::string_view> fields;
};

// The table's entry for rule, or nullptr for a rule it does not list.
const RuleText* find_rule_text(std::string_view rule);
// The sentence for rule: the table's, or a general one naming the rule in words.
std::string rule_sentence(std::string_view rule);
// The rules of the table and of `known` (e.g. the pruned counters) that text names in quotes
// ("rule"), in the order they first appear.
std::vector<std::string> rules_named_in(std::string_view text, const std::vector<std::string>& known = {});

}  // namespace hapmoe
