// The native `hapmoe` command: read a scenario, call the same JSON API as the web page, print.
// Exit status: 0 success (also "no feasible plan"), 2 invalid input, 1 internal error.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api.hpp"
#include "int_arg.hpp"
#include "profile_cmd.hpp"
#include "reproduce_table.hpp"
#include "hapmoe/json_text.hpp"
#include "hapmoe/field_schema.hpp"

using nlohmann::json;

namespace {

const char* kUsage =
    "usage:\n"
    "  hapmoe plan FILE|- [--top N] [--json] [--timing]   search for the best plans\n"
    "  hapmoe evaluate FILE|- [--json]                   cost the scenario's \"plan\"\n"
    "  hapmoe timeline FILE|-                            the \"plan\"'s schedule as JSON (docs/scenario.md)\n"
    "  hapmoe node-loss FILE|- [--json] [--timing]       if a node fails: the best plan without one node\n"
    "                                                    of each group the \"plan\" (else the best plan) uses\n"
    "  hapmoe validate FILE|-                            check a scenario\n"
    "  hapmoe presets [gpus|models|clusters] [--json]    list the built-in presets\n"
    "  hapmoe schema [--json|--markdown]                 the scenario fields: type, unit, range,\n"
    "                                                    default, help (docs/fields.md)\n"
    "  hapmoe reproduce [--json] [--model ID]... [--cluster ID]...\n"
    "                                                    the paper's evaluation on our model\n"
    "  hapmoe version\n";
// (`hapmoe profile ...` usage: profile_cmd.hpp, printed after kUsage.)

int usage_error(const std::string& msg) {
  std::cerr << "hapmoe: " << hapmoe::to_valid_utf8(msg) << "\n" << kUsage << hapmoe_cli::kProfileUsage;
  return 2;
}

// Reads at most one byte past the JSON size limit (the API then rejects the text as too large).
bool read_input(const std::string& path, std::string* out) {
  std::ifstream file;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) return false;
  }
  std::istream& in = path == "-" ? std::cin : file;
  out->assign(hapmoe::kMaxJsonTextBytes + 1, '\0');
  in.read(&(*out)[0], static_cast<std::streamsize>(out->size()));
  out->resize(static_cast<size_t>(in.gcount()));
  return !in.bad();
}

int exit_code(const json& result) {
  if (result.value("ok", false)) return 0;
  return result["error"].value("code", "") == "internal" ? 1 : 2;
}

int print_error(const json& result) {
  const json& e = result["error"];
  std::cerr << "hapmoe: " << e.value("field", "") << ": " << e.value("message", "") << " ["
            << e.value("code", "") << "]\n";
  return exit_code(result);
}

std::string fmt(double v, int precision = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", precision, v);
  return buf;
}

std::string split_of(const json& plan) {
  std::string s;
  for (const auto& st : plan["stages"]) s += (s.empty() ? "" : "/") + std::to_string(st["layers"].get<int>());
  return s;
}

double max_of(const json& arr) {
  double m = 0;
  for (const auto& x : arr) m = std::max(m, x.get<double>());
  return m;
}

// "none", "full", "selective" or the modules joined by "+" (a plan's stage recompute value).
std::string recompute_label(const json& rc) {
  if (rc.is_string()) return rc.get<std::string>();
  std::string out;
  for (const auto& m : rc["modules"]) out += (out.empty() ? "" : "+") + m.get<std::string>();
  return out;
}

// The plan's recompute, or "per-stage" when its stages differ (hetero mode).
std::string recompute_of(const json& plan) {
  const std::string first = recompute_label(plan["stages"][0]["recompute"]);
  for (const auto& st : plan["stages"]) {
    if (recompute_label(st["recompute"]) != first) return "per-stage";
  }
  return first;
}

// "a2a", "dep" (DeepEP), "hep" (HybridEP), "ag"; then "/te" or "/loc" (per-layer CUDA graphs) or
// "/full" (full-iteration graphs).
std::string stack_of(const json& pl) {
  const std::string d = pl.value("moe_token_dispatcher_type", std::string("alltoall"));
  const std::string b = pl.value("moe_flex_dispatcher_backend", std::string());
  std::string out = d == "flex" ? (b == "hybridep" ? "hep" : "dep") : d == "allgather" ? "ag" : "a2a";
  const std::string g = pl.value("cuda_graph_impl", std::string("none"));
  if (g == "transformer_engine") out += "/te";
  if (g == "local") out += "/loc";
  if (g == "full_iteration") out += "/full";
  return out;
}

// "x1.33 slower than the best" for a baseline's speedup (its time over the best plan's), or
// "x1.59 faster than the best" when below 1 (hetero mode's baselines come from upstream).
std::string versus_best(double speedup) {
  return speedup >= 1 ? "x" + fmt(speedup, 2) + " slower than the best" : "x" + fmt(1 / speedup, 2) + " faster than the best";
}

// With runtimes (search.mode "auto"): each row starts with the runtime that runs the plan.
void print_plan_row(int rank, const json& p, bool runtimes = false) {
  const json& pl = p["plan"];
  if (runtimes) std::printf("%-10s", pl.value("runtime", std::string("-")).c_str());
  const json& m = p["metrics"];
  std::string rc = recompute_of(pl);
  if (pl.value("ep_comm_overlap", false)) rc += " +ovl";
  if (pl.value("optimizer_offload_fraction", 0.0) > 0) rc += " +off" + fmt(pl["optimizer_offload_fraction"].get<double>(), 2);
  std::printf("%4d  %2d %2d %3d %4d %3d %3d %3d %3d  %-8s %-9s %9s %10s %8s %6s %8s  %s\n", rank,
              pl["tp"].get<int>(), pl["cp"].get<int>(), pl["pp"].get<int>(), pl["dp"].get<int>(),
              pl["ep"].get<int>(), pl["etp"].get<int>(), pl["vpp"].get<int>(),
              pl["micro_batch_size"].get<int>(), stack_of(pl).c_str(),
              rc.c_str(),
              fmt(m["iteration_time_s"].get<double>()).c_str(),
              fmt(m["tokens_per_s_per_gpu"].get<double>(), 0).c_str(),
              fmt(m["tflops_per_gpu"].get<double>(), 1).c_str(),
              (fmt(100 * m["mfu"].get<double>(), 1) + "%").c_str(),
              fmt(max_of(m["peak_memory_gib"]), 1).c_str(), split_of(pl).c_str());
}

// The closest plan's memory per stage (GiB per GPU), what a user must shrink.
void print_closest_plan(const json& c) {
  std::printf("closest plan's memory per GPU (GiB):\n  %5s %-14s %6s %8s %9s %9s %11s %8s %8s %8s %9s\n", "stage", "gpu",
              "layers", "weights", "gradients", "optimizer", "activations", "reserved", "total", "capacity", "shortfall");
  for (const auto& st : c["stages"]) {
    std::printf("  %5d %-14s %6d %8s %9s %9s %11s %8s %8s %8s %9s\n", st["stage"].get<int>(),
                st["gpu"].get<std::string>().c_str(), st["layers"].get<int>(), fmt(st["weights_gib"].get<double>(), 1).c_str(),
                fmt(st["gradients_gib"].get<double>(), 1).c_str(), fmt(st["optimizer_state_gib"].get<double>(), 1).c_str(),
                fmt(st["activations_gib"].get<double>(), 1).c_str(), fmt(st["reserved_gib"].get<double>(), 1).c_str(),
                fmt(st["total_gib"].get<double>(), 1).c_str(), fmt(st["capacity_gib"].get<double>(), 1).c_str(),
                fmt(st["shortfall_gib"].get<double>(), 1).c_str());
  }
}

void print_table_header(bool runtimes = false) {
  if (runtimes) std::printf("%-10s", "runtime");
  std::printf("rank  tp cp  pp   dp  ep etp vpp mbs  stack    recompute   iter(s) tok/s/GPU TFLOPS/GPU    MFU  mem(GiB)  layers per stage\n");
}

// The best plan's software stack and the band of its predicted time.
void print_stack_and_band(const json& p) {
  const json& pl = p["plan"];
  const json& m = p["metrics"];
  std::string dispatch = pl.value("moe_token_dispatcher_type", std::string("alltoall"));
  if (pl.contains("moe_flex_dispatcher_backend")) dispatch += " (" + pl["moe_flex_dispatcher_backend"].get<std::string>() + ")";
  std::string graphs = pl.value("cuda_graph_impl", std::string("none"));
  if (pl.contains("cuda_graph_modules")) {
    std::string mods;
    for (const auto& x : pl["cuda_graph_modules"]) mods += (mods.empty() ? "" : ", ") + x.get<std::string>();
    graphs += " [" + (mods.empty() ? std::string("whole layer") : mods) + "]";
  }
  std::printf("\nbest plan: token dispatcher %s, CUDA graphs %s\n", dispatch.c_str(), graphs.c_str());
  const json& range = m["iteration_time_range_s"];
  std::printf("iteration time %s s, likely %s to %s s (+-%s%%: %s)\n", fmt(m["iteration_time_s"].get<double>()).c_str(),
              fmt(range[0].get<double>()).c_str(), fmt(range[1].get<double>()).c_str(),
              fmt(100 * m["iteration_time_error_fraction"].get<double>(), 0).c_str(),
              m.value("error_basis", std::string()).c_str());
}

void print_stages(const json& p) {
  print_stack_and_band(p);
  std::printf("\nstages of the best plan:\n  stage  gpu            layers  fwd(ms)  bwd(ms)  memory (GiB)\n");
  for (const auto& st : p["breakdown"]["stages"]) {
    std::printf("  %5d  %-14s %6d %8s %8s  %s / %s%s\n", st["stage"].get<int>(),
                st["gpu"].get<std::string>().c_str(), st["layers"].get<int>(),
                fmt(1e3 * st["forward_s"].get<double>(), 1).c_str(),
                fmt(1e3 * st["backward_s"].get<double>(), 1).c_str(),
                fmt(st["peak_memory_gib"].get<double>(), 1).c_str(),
                fmt(st["memory_capacity_gib"].get<double>(), 1).c_str(),
                st["fits_memory"].get<bool>() ? "" : "  (does not fit)");
  }
  if (p.contains("flagscale")) {  // hetero plan: FlagScale's config
    int i = 0;
    for (const auto& st : p["plan"]["stages"]) {
      std::printf("  mesh of stage %d: tp %d ep %d etp %d dp %d\n", i++, st["tp"].get<int>(),
                  st["ep"].get<int>(), st["etp"].get<int>(), st["dp"].get<int>());
    }
    for (const auto& w : p["warnings"]) std::printf("warning: %s\n", w.get<std::string>().c_str());
    std::printf("\nFlagScale train config:\n%s\nhostfile:\n%s", p["flagscale"]["yaml"].get<std::string>().c_str(),
                p["flagscale"]["hostfile"].get<std::string>().c_str());
    return;
  }
  for (const auto& w : p.value("warnings", json::array())) std::printf("warning: %s\n", w.get<std::string>().c_str());
  std::printf("\nMegatron-LM:\n");
  for (const auto& [k, v] : p["megatron"]["env"].items()) std::printf("  export %s=%s\n", k.c_str(), v.get<std::string>().c_str());
  std::printf("  %s\n", p["megatron"]["args"].get<std::string>().c_str());
  std::printf("  (launch script and hostfile in pipeline-stage order: --json, megatron.launch and megatron.hostfile)\n");
}

void print_costs(const json& r);  // below

int cmd_plan(const std::string& text, bool as_json, int top, bool timing) {
  std::string input = text;
  if (top > 0) {
    // Bad text is passed on unchanged: the API reports it with the same limits.
    auto parsed = hapmoe::parse_json_text(text);
    json doc = parsed ? std::move(parsed).value() : json();
    if (doc.is_object()) {
      if (!doc.contains("search") || !doc["search"].is_object()) doc["search"] = json::object();
      doc["search"]["top_k"] = top;
      input = doc.dump();
    }
  }
  std::string out = hapmoe::api::plan(input, nullptr, timing);
  json r = json::parse(out);
  if (!r.value("ok", false)) {
    if (as_json) std::cout << out << "\n";
    return print_error(r);
  }
  if (as_json) {
    std::cout << r.dump() << "\n";
    return 0;
  }
  if (r.contains("model")) {
    const json& mo = r["model"];
    std::printf("model %s: %s B parameters, %s B active per token\n", mo.value("name", "").c_str(),
                fmt(mo["parameters_total"].get<double>() / 1e9, 2).c_str(),
                fmt(mo["parameters_active"].get<double>() / 1e9, 2).c_str());
  }
  for (const auto& n : r.value("notes", json::array())) std::printf("note: %s\n", n.get<std::string>().c_str());
  if (r["plans"].empty()) {
    const json& d = r["diagnosis"];
    std::printf("no feasible plan: %s\n", d.value("message", "").c_str());
    for (const auto& rule : d.value("rules", json::array())) {
      std::printf("  %s: %s\n", rule["rule"].get<std::string>().c_str(), rule["sentence"].get<std::string>().c_str());
    }
    if (d.contains("closest_plan")) print_closest_plan(d["closest_plan"]);
    for (const auto& s : d["suggestions"]) std::printf("  - %s\n", s.get<std::string>().c_str());
    return 0;
  }
  bool runtimes = false;
  for (const auto& p : r["plans"]) runtimes = runtimes || p["plan"].contains("runtime");
  print_table_header(runtimes);
  int rank = 1;
  for (const auto& p : r["plans"]) print_plan_row(rank++, p, runtimes);
  for (const char* name : {"uniform", "megatron_default"}) {
    const json& b = r["baselines"][name];
    if (b.is_null()) continue;
    std::printf("\nbaseline %s (%s):\n", name, versus_best(b["speedup"].get<double>()).c_str());
    print_plan_row(0, b, runtimes);
  }
  if (r["baselines"].contains("upstream")) {
    const double gain = r["baselines"]["upstream"]["speedup"].get<double>();
    if (gain >= 1) {
      std::printf("\nbest upstream (megatron mode) plan (the best plan gains x%s):\n", fmt(gain, 2).c_str());
    } else {  // hetero mode, where upstream wins: never shown as a gain
      std::printf("\nbest upstream (megatron mode) plan (x%s faster than hetero mode's best: search.mode \"auto\" ranks it first):\n",
                  fmt(1 / gain, 2).c_str());
    }
    print_plan_row(0, r["baselines"]["upstream"], runtimes);
  }
  print_costs(r);
  print_stages(r["plans"][0]);
  const json& st = r["stats"];
  std::printf("\nsearch: %lld candidates, %lld layer splits searched, pruned %s\n",
              st["candidates"].get<long long>(), st["evaluated"].get<long long>(), st["pruned"].dump().c_str());
  return 0;
}

// Cost (the user's prices), run totals and checkpoint figures of each plan, and the Pareto front.
void print_costs(const json& r) {
  const json& plans = r["plans"];
  const bool priced = plans[0]["metrics"].contains("cost_per_hour");
  const bool run = plans[0]["metrics"].contains("train_hours");
  if (priced || run) {
    std::printf("\n%s:\n", priced ? "cost (at the prices given)" : "training run");
    int rank = 1;
    for (const auto& p : plans) {
      const json& m = p["metrics"];
      std::string line = "  " + std::to_string(rank++) + ".";
      if (priced) {
        line += " " + fmt(m["cost_per_hour"].get<double>(), 2) + " USD/h, " +
                fmt(m["cost_per_million_tokens"].get<double>(), 3) + " USD per million tokens";
      }
      if (run) {
        line += std::string(priced ? ";" : "") + " run " + fmt(m["train_hours"].get<double>(), 1) + " h";
        if (m.contains("train_cost")) line += ", " + fmt(m["train_cost"].get<double>(), 0) + " USD";
      }
      std::printf("%s\n", line.c_str());
    }
  }
  if (r.contains("pareto") && !r["pareto"].empty()) {
    std::printf("\nPareto front (no plan is both faster and cheaper per token), fastest first:\n");
    for (const auto& p : r["pareto"]) {
      const std::string at = p["plan_index"].is_null() ? "not in the top plans" : "plan " + std::to_string(p["plan_index"].get<int>() + 1);
      std::printf("  %9s s/iter  %8s USD/h  %8s USD per million tokens  %5lld GPUs  (%s)\n",
                  fmt(p["iteration_time_s"].get<double>()).c_str(), fmt(p["cost_per_hour"].get<double>(), 2).c_str(),
                  fmt(p["cost_per_million_tokens"].get<double>(), 3).c_str(), p["gpus_used"].get<long long>(), at.c_str());
    }
  }
  const json& m = plans[0]["metrics"];
  if (m.contains("resilience")) {
    const json& x = m["resilience"];
    std::printf("\ncheckpoints (plan 1): %s GiB written in %s s; job MTBF %s h over %lld nodes; save every %s s "
                "(--save-interval %lld); expected goodput %s%%\n",
                fmt(x["checkpoint_gib"].get<double>(), 1).c_str(), fmt(x["checkpoint_write_s"].get<double>(), 1).c_str(),
                fmt(x["job_mtbf_hours"].get<double>(), 1).c_str(), x["nodes_used"].get<long long>(),
                fmt(x["checkpoint_interval_s"].get<double>(), 0).c_str(), x["save_interval_iterations"].get<long long>(),
                fmt(100 * x["expected_goodput"].get<double>(), 1).c_str());
  }
}

int cmd_node_loss(const std::string& text, bool as_json, bool timing) {
  const std::string out = hapmoe::api::node_loss(text, nullptr, timing);
  const json r = json::parse(out);
  if (as_json) std::cout << out << "\n";
  if (!r.value("ok", false)) return print_error(r);
  if (as_json) return 0;
  const json& p = r["plan"];
  std::printf("plan: %s s per iteration on %lld GPUs\nif one node fails:\n", fmt(p["iteration_time_s"].get<double>()).c_str(),
              p["gpus_used"].get<long long>());
  for (const auto& l : r["losses"]) {
    std::string what = "group " + std::to_string(l["group"].get<int>()) + " (" + l["gpu"].get<std::string>() + "), " +
                       (l["group_removed"].get<bool>() ? "its only node" : std::to_string(l["nodes_left"].get<int>()) + (l["nodes_left"].get<int>() == 1 ? " node left" : " nodes left"));
    if (l["entry"].is_null()) {
      std::printf("  %s: no plan: %s\n", what.c_str(), l.value("message", std::string()).c_str());
      continue;
    }
    std::printf("  %s: %s s per iteration (x%s)%s\n", what.c_str(), fmt(l["iteration_time_s"].get<double>()).c_str(),
                fmt(l["slowdown"].get<double>(), 3).c_str(), l["budget_reached"].get<bool>() ? " [search budget reached]" : "");
  }
  return 0;
}

int cmd_evaluate(const std::string& text, bool as_json) {
  const std::string out = hapmoe::api::evaluate(text);
  const json r = json::parse(out);
  if (as_json) std::cout << out << "\n";
  if (!r.value("ok", false)) return print_error(r);
  if (!as_json) {
    print_table_header();
    print_plan_row(1, r["plans"][0]);
    print_stages(r["plans"][0]);
  }
  return 0;
}

int cmd_presets(const std::string& kind, bool as_json) {
  const json all = json::parse(hapmoe::api::presets());
  if (!kind.empty() && !all.contains(kind)) return usage_error("unknown preset kind \"" + kind + "\"");
  const json out = kind.empty() ? all : all[kind];
  if (as_json) {
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  for (const char* k : {"gpus", "models", "clusters"}) {
    if (!kind.empty() && kind != k) continue;
    std::printf("%s:\n", k);
    for (const auto& [id, v] : all[k].items()) std::printf("  %-18s %s\n", id.c_str(), v.value("name", "").c_str());
  }
  return 0;
}

// The field table: a readable list, --json (api::schema()) or --markdown (docs/fields.md).
int cmd_schema(bool as_json, bool as_markdown) {
  if (as_json && as_markdown) return usage_error("schema takes --json or --markdown, not both");
  if (as_markdown) {
    std::cout << hapmoe::fields_markdown();
    return 0;
  }
  const json s = json::parse(hapmoe::api::schema());
  if (as_json) {
    std::cout << s.dump(2) << "\n";
    return 0;
  }
  for (const auto& f : s["fields"]) {
    std::string def = f.value("default_kind", "");
    if (f.contains("default")) def = f["default"].dump();
    std::printf("%-48s %-12s %-10s %s\n", f["path"].get<std::string>().c_str(),
                f["type"].get<std::string>().c_str(), f["unit"].get<std::string>().c_str(), def.c_str());
  }
  return 0;
}

// `reproduce`: the paper's models and clusters (all, or those named), as a table or JSON.
int cmd_reproduce(const std::vector<std::string>& models, const std::vector<std::string>& clusters, bool as_json) {
  json options = json::object();
  if (!models.empty()) options["models"] = models;
  if (!clusters.empty()) options["clusters"] = clusters;
  const std::string out = hapmoe::api::reproduce(options.dump());
  const json r = json::parse(out);
  if (as_json) std::cout << out << "\n";
  if (!r.value("ok", false)) return print_error(r);
  if (!as_json) hapmoe::cli::print_reproduce_table(r);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage_error("missing command");
  const std::string cmd = args[0];
  if (cmd == "profile") return hapmoe_cli::cmd_profile(std::vector<std::string>(args.begin() + 1, args.end()));
  bool as_json = false, timing = false, as_markdown = false;
  int top = 0;
  std::vector<std::string> pos, models, clusters;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--json") {
      as_json = true;
    } else if (args[i] == "--markdown" && cmd == "schema") {
      as_markdown = true;
    } else if (args[i] == "--timing") {
      timing = true;
    } else if (args[i] == "--top") {
      const std::string value = i + 1 < args.size() ? args[++i] : "";
      const auto n = hapmoe_cli::parse_int_arg(value, 1, 100);
      if (!n) return usage_error(hapmoe_cli::int_arg_message("--top", 1, 100, value));
      top = static_cast<int>(*n);
    } else if ((args[i] == "--model" || args[i] == "--cluster") && cmd == "reproduce") {
      if (i + 1 >= args.size()) return usage_error(args[i] + " needs an id");
      // The ids travel as JSON text, which must be UTF-8 (a preset id always is).
      if (hapmoe::first_invalid_utf8(args[i + 1]) != std::string::npos) {
        return usage_error(args[i] + " needs a preset id in UTF-8, got ill-formed bytes: \"" + args[i + 1] + "\"");
      }
      (args[i] == "--model" ? models : clusters).push_back(args[i + 1]);
      ++i;
    } else if (args[i].size() > 1 && args[i][0] == '-' && args[i] != "-") {
      return usage_error("unknown option " + args[i]);
    } else {
      pos.push_back(args[i]);
    }
  }
  try {
    if (cmd == "version") {
      std::cout << json::parse(hapmoe::api::version())["version"].get<std::string>() << "\n";
      return 0;
    }
    if (cmd == "presets") return cmd_presets(pos.empty() ? "" : pos[0], as_json);
    if (cmd == "reproduce") return pos.empty() ? cmd_reproduce(models, clusters, as_json) : usage_error("reproduce takes no file");
    if (cmd == "schema") return pos.empty() ? cmd_schema(as_json, as_markdown) : usage_error("schema takes no file");
    if (cmd != "plan" && cmd != "evaluate" && cmd != "validate" && cmd != "timeline" && cmd != "node-loss") {
      return usage_error("unknown command \"" + cmd + "\"");
    }
    if (pos.size() != 1) return usage_error(cmd + " needs one scenario file (or - for standard input)");
    std::string text;
    if (!read_input(pos[0], &text)) {
      std::cerr << "hapmoe: cannot read " << hapmoe::to_valid_utf8(pos[0]) << "\n";
      return 2;
    }
    if (cmd == "validate") {
      const json r = json::parse(hapmoe::api::validate(text));
      if (!r.value("ok", false)) return print_error(r);
      std::cout << "ok\n";
      return 0;
    }
    if (cmd == "evaluate") return cmd_evaluate(text, as_json);
    if (cmd == "node-loss") return cmd_node_loss(text, as_json, timing);
    if (cmd == "timeline") {
      const std::string out = hapmoe::api::timeline(text);
      const json r = json::parse(out);
      if (!r.value("ok", false)) return print_error(r);
      std::cout << out << "\n";
      return 0;
    }
    return cmd_plan(text, as_json, top, timing);
  } catch (const std::exception& e) {
    std::cerr << "hapmoe: internal error: " << hapmoe::to_valid_utf8(e.what()) << "\n";
    return 1;
  }
}
