#include "api.hpp"

#include <exception>
#include <new>

#include "hapmoe/evaluate.hpp"
#include "hapmoe/json_text.hpp"
#include "hapmoe/presets.hpp"
#include "hapmoe/profile_import.hpp"
#include "hapmoe/profile_import_io.hpp"
#include "hapmoe/reproduce_io.hpp"
#include "hapmoe/result_io.hpp"
#include "hapmoe/scenario_io.hpp"
#include "hapmoe/planner.hpp"
#include "hapmoe/search.hpp"
#include "hapmoe/timeline_io.hpp"

namespace hapmoe::api {

using nlohmann::json;

namespace {
const PresetCatalog& catalog() {
  static const PresetCatalog c = load_builtin_presets();
  return c;
}

// Compact JSON; any invalid UTF-8 that reached a string is replaced, never thrown on.
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// Scenario text -> Scenario: the door limits of json_text first, then the field checks.
Expected<Scenario> read_scenario(const std::string& text) {
  auto doc = parse_json_text(text);
  if (!doc) return doc.error();
  return parse_scenario(*doc, catalog());
}

// The one place where anything unexpected becomes an error value (exit code 1 in the CLI).
template <class F>
std::string guarded(F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return dump(error_result(Error{"internal", "internal error: out of memory", ""}));
  } catch (const std::exception& e) {
    return dump(error_result(Error{"internal", to_valid_utf8(std::string("internal error: ") + e.what()), ""}));
  } catch (...) {
    return dump(error_result(Error{"internal", "internal error", ""}));
  }
}
}  // namespace

std::string version() { return dump(json{{"version", HAPMOE_VERSION}}); }

std::string presets() {
  return guarded([] { return dump(presets_to_json(catalog())); });
}

std::string schema() {
  return guarded([] { return dump(schema_to_json()); });
}

std::string validate(const std::string& text) {
  return guarded([&] {
    const auto s = read_scenario(text);
    if (!s) return dump(error_result(s.error()));
    return dump(json{{"format", kResultFormat}, {"ok", true}, {"model", model_size_to_json(s->model)}});
  });
}

std::string evaluate(const std::string& text) {
  return guarded([&] {
    const auto s = read_scenario(text);
    if (!s) return dump(error_result(s.error()));
    if (!s->plan) {
      return dump(error_result(Error{"missing_field", "evaluate needs the scenario's \"plan\"", "plan"}));
    }
    const auto ev = evaluate_plan(*s, *s->plan);
    if (!ev) return dump(error_result(ev.error()));
    return dump(evaluate_result(*s, *ev));
  });
}

std::string timeline(const std::string& text) {
  return guarded([&] {
    const auto s = read_scenario(text);
    if (!s) return dump(error_result(s.error()));
    if (!s->plan) {
      return dump(error_result(Error{"missing_field", "timeline needs the scenario's \"plan\"", "plan"}));
    }
    const auto ev = evaluate_plan(*s, *s->plan);
    if (!ev) return dump(error_result(ev.error()));
    const auto t = plan_timeline(*ev);
    if (!t) {
      return dump(error_result(Error{"too_large", "timeline: pp x vpp x micro-batches is above " +
                                     std::to_string(kMaxTimelineChunkSlots) + "; the schedule is not drawn", "plan"}));
    }
    return dump(json{{"format", kResultFormat}, {"ok", true}, {"metrics", metrics_to_json(ev->metrics)},
                     {"timeline", timeline_to_json(*ev, *t)}});
  });
}

std::string plan(const std::string& text, const ProgressFn& progress, bool include_timing) {
  return guarded([&] {
    const auto s = read_scenario(text);
    if (!s) return dump(error_result(s.error()));
    SearchControl control;
    control.progress = progress;
    const auto result = search_plans(*s, control);
    if (!result) return dump(error_result(result.error()));
    return dump(search_result_to_json(*s, *result, include_timing));
  });
}

std::string node_loss(const std::string& text, const ProgressFn& progress, bool include_timing) {
  return guarded([&] {
    const auto s = read_scenario(text);
    if (!s) return dump(error_result(s.error()));
    SearchControl control;
    control.progress = progress;
    PlanSpec plan;
    if (s->plan) {
      plan = *s->plan;
    } else {
      const auto best = search_plans(*s);
      if (!best) return dump(error_result(best.error()));
      if (best->plans.empty()) {
        return dump(error_result(Error{"no_plan", "no plan fits this cluster: nothing to re-plan", "plan"}));
      }
      plan = best->plans.front().plan;
    }
    const auto r = plan_after_node_loss(*s, plan, control);
    if (!r) return dump(error_result(r.error()));
    return dump(node_loss_to_json(*s, *r, include_timing));
  });
}

namespace {
// An importer request: JSON of at most the importer's text limit plus room for the scenario.
template <class F>
std::string import_request(const std::string& text, F&& run) {
  return guarded([&] {
    if (text.size() > kMaxImportTextBytes + kMaxJsonTextBytes) {
      return dump(error_result(Error{"too_large", "import request above 9 MiB", "$"}));
    }
    const json request = json::parse(text, nullptr, false);
    if (request.is_discarded()) return dump(error_result(Error{"bad_json", "the request is not valid JSON", "$"}));
    const Expected<json> r = run(request);
    if (!r) return dump(error_result(r.error()));
    json out = r.value();
    out["format"] = "hapmoe.profile_import/1";
    out["ok"] = true;
    return dump(out);
  });
}
}  // namespace

std::string import_nccl(const std::string& text) {
  return import_request(text, [](const json& r) { return import_nccl_request(r); });
}

std::string import_log(const std::string& text) {
  return import_request(text, [](const json& r) { return import_log_request(r, catalog()); });
}
std::string reproduce(const std::string& text, const std::function<void(int, int)>& progress) {
  return guarded([&] {
    auto options = parse_json_text(text.empty() ? "{}" : text);
    if (!options) return dump(error_result(options.error()));
    const auto cases = paper_cases(*options, catalog());
    if (!cases) return dump(error_result(cases.error()));
    const std::vector<ComparisonColumn> columns = standard_columns();
    const ReproduceResult r = hapmoe::reproduce(*cases, columns, progress);
    return dump(reproduce_to_json(*cases, columns, r));
  });
}

}  // namespace hapmoe::api
