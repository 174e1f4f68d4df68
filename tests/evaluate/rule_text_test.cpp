// The rules' sentences come from the core: a diagnosis names each rule it blames with its
// sentence and form fields, and the stats give a sentence for every counter with a count.
#include <doctest/doctest.h>

#include "evaluate/rule_text.hpp"
#include "hapmoe/planner.hpp"
#include "hapmoe/presets.hpp"
#include "hapmoe/result_io.hpp"
#include "hapmoe/scenario_io.hpp"

using namespace hapmoe;
using nlohmann::json;

namespace {
json plan_json(const json& doc) {
  static const PresetCatalog presets = load_builtin_presets();
  const auto s = parse_scenario(doc, presets);
  REQUIRE(s.ok());
  const auto r = search_plans(*s);
  REQUIRE(r.ok());
  return search_result_to_json(*s, *r, false);
}
}  // namespace

TEST_CASE("rule text: a blamed rule comes with its sentence and fields") {
  const json j = plan_json({{"model", "mixtral-8x7b"},
                            {"cluster", {{"groups", {{{"gpu", "h100-sxm"}, {"nodes", 2}, {"gpus_per_node", 4}}}}}},
                            {"training", {{"global_batch_size", 64}, {"seq_length", 4096}}},
                            {"search", {{"tp", {8}}}}});
  REQUIRE(j["plans"].empty());
  const json& rules = j["diagnosis"]["rules"];
  REQUIRE(rules.size() == 1);
  CHECK(rules[0]["rule"] == "tp_in_scale_up_domain");
  CHECK(rules[0]["sentence"].get<std::string>().rfind("TP must divide the GPUs of one node", 0) == 0);
  CHECK(rules[0]["fields"] == json({"search.tp", "cluster.groups[].gpus_per_node"}));
  CHECK(j["stats"]["rules"]["tp_in_scale_up_domain"] == rules[0]["sentence"]);
}

TEST_CASE("rule text: every counter with a count has a sentence of its own") {
  for (const json& doc : {json{{"model", "deepseek-v3"},
                               {"cluster", {{"groups", {{{"gpu", "h100-sxm"}, {"nodes", 1}}}}}},
                               {"training", {{"global_batch_size", 64}, {"seq_length", 4096}}}},
                          json{{"model", "mixtral-8x7b"},
                               {"cluster", "h100-64"},
                               {"training", {{"global_batch_size", 256}, {"seq_length", 4096}}}}}) {
    const json j = plan_json(doc);
    for (const auto& item : j["stats"]["pruned"].items()) {
      const std::string rule = item.key();  // a plain local: CAPTURE's lambda cannot take a structured binding
      if (item.value().get<long long>() == 0) continue;
      CAPTURE(rule);
      REQUIRE(j["stats"]["rules"].contains(rule));
      CHECK(find_rule_text(rule) != nullptr);  // not the general fallback
    }
  }
  CHECK(rule_sentence("no_such_rule").find("\"no such rule\"") != std::string::npos);
  CHECK(rules_named_in("cut by \"expert_grid\" and \"vpp_requires_pp\"") ==
        std::vector<std::string>{"expert_grid", "vpp_requires_pp"});
}
