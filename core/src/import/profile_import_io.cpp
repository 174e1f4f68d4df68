#include "hapmoe/profile_import_io.hpp"

#include <algorithm>

#include "import/efficiency_fit.hpp"
#include "hapmoe/profile_import.hpp"
#include "io/profile_io.hpp"
#include "hapmoe/scenario_io.hpp"

namespace hapmoe {

using nlohmann::json;

namespace {

constexpr size_t kMaxImportFiles = 64;

Expected<std::string> string_field(const json& r, const char* key, bool required) {
  if (!r.contains(key) || r.at(key).is_null()) {
    if (required) return Error{"missing_field", std::string("required: \"") + key + "\"", key};
    return std::string();
  }
  if (!r.at(key).is_string()) return Error{"wrong_type", "expected a string", key};
  return r.at(key).get<std::string>();
}

// "all_to_all" -> op, or nullopt for "" ; error for anything else.
Expected<std::optional<CollectiveOp>> op_field(const std::string& v) {
  if (v.empty()) return std::optional<CollectiveOp>();
  for (CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter,
                          CollectiveOp::kAllToAll}) {
    if (v == to_string(op)) return std::optional<CollectiveOp>(op);
  }
  return Error{"bad_value", "expected \"all_reduce\", \"all_gather\", \"reduce_scatter\" or \"all_to_all\", got \"" + v + "\"", "op"};
}

Expected<std::optional<Placement>> placement_field(const std::string& v) {
  if (v.empty()) return std::optional<Placement>();
  for (Placement p : {Placement::kIntraNode, Placement::kInterNode, Placement::kInterGroup}) {
    if (v == to_string(p)) return std::optional<Placement>(p);
  }
  return Error{"bad_value", "expected \"intra_node\", \"inter_node\" or \"inter_group\", got \"" + v + "\"", "placement"};
}

json imported_summary(const std::string& name, size_t index, const NcclRun& n, size_t kept, size_t repeated) {
  double max_bw = 0;
  for (const auto& p : n.points) max_bw = std::max(max_bw, p.busbw_gbps);
  return {{"file", name}, {"run", index + 1}, {"line", n.first_line}, {"op", to_string(n.op)}, {"ranks", n.ranks},
          {"placement", to_string(n.placement)}, {"hosts", n.hosts}, {"device", n.device}, {"points", kept},
          {"repeated", repeated}, {"max_busbw_gbps", max_bw}};
}

}  // namespace

Expected<json> import_nccl_request(const json& r) {
  if (!r.is_object()) return Error{"wrong_type", "expected an object", "$"};
  const auto gpu = string_field(r, "gpu", true);
  if (!gpu) return gpu.error();
  if (gpu->empty()) return Error{"bad_value", "expected a GPU id (the cluster group's gpu preset id)", "gpu"};
  NcclImportOptions options;
  const auto op_text = string_field(r, "op", false);
  if (!op_text) return op_text.error();
  const auto op = op_field(*op_text);
  if (!op) return op.error();
  options.op = op.value();
  const auto where_text = string_field(r, "placement", false);
  if (!where_text) return where_text.error();
  const auto where = placement_field(*where_text);
  if (!where) return where.error();
  options.placement = where.value();
  if (!r.contains("files") || !r.at("files").is_array() || r.at("files").empty()) {
    return Error{"missing_field", "expected a non-empty list of {\"name\", \"text\"}", "files"};
  }
  if (r.at("files").size() > kMaxImportFiles) return Error{"too_many", "at most 64 files", "files"};
  // Every file's runs first, then their points merged: a repeated measurement is dropped or refused.
  std::vector<std::vector<NcclRun>> file_runs;
  std::vector<NamedNcclRun> named;
  std::vector<std::string> names;
  for (size_t i = 0; i < r.at("files").size(); ++i) {
    const json& f = r.at("files")[i];
    const std::string at = "files[" + std::to_string(i) + "]";
    if (!f.is_object() || !f.contains("text") || !f.at("text").is_string() ||
        (f.contains("name") && !f.at("name").is_string())) {
      return Error{"wrong_type", "expected {\"name\": string, \"text\": nccl-tests output}", at};
    }
    names.push_back(f.value("name", at));
    auto n = import_nccl_tests(f.at("text").get<std::string>(), options);
    if (!n) return Error{n.error().code, names.back() + ": " + n.error().field + ": " + n.error().message, at};
    file_runs.push_back(std::move(n).value());
  }
  for (size_t i = 0; i < file_runs.size(); ++i) {
    for (const NcclRun& run : file_runs[i]) named.push_back({names[i], "files[" + std::to_string(i) + "]", &run});
  }
  std::vector<size_t> repeated;
  auto points = merge_nccl_runs(named, &repeated);
  if (!points) return points.error();
  if (points->size() > kMaxProfileCollectivePoints) {
    return Error{"too_many", "more than " + std::to_string(kMaxProfileCollectivePoints) + " points in all", "files"};
  }
  GpuProfile g;
  g.collectives = std::move(points).value();
  json imported = json::array(), notes = json::array();
  std::string sources;
  for (size_t k = 0, i = 0; i < file_runs.size(); ++i) {
    for (size_t j = 0; j < file_runs[i].size(); ++j, ++k) {
      const NcclRun& n = file_runs[i][j];
      const std::string run = names[i] + (file_runs[i].size() > 1 ? " run " + std::to_string(j + 1) : "");
      imported.push_back(imported_summary(names[i], j, n, n.points.size() - repeated[k], repeated[k]));
      if (repeated[k] > 0) {
        notes.push_back(run + ": " + std::to_string(repeated[k]) + " of its " + std::to_string(n.points.size()) +
                        " rows repeat points already imported with the same busbw (the same output given twice?); kept once");
      }
      sources += (sources.empty() ? "" : "; ") + run + " (" + collective_perf_name(n.op) + ", " +
                 std::to_string(n.ranks) + " ranks on " + std::to_string(n.hosts.size()) + " host(s)" +
                 (n.device.empty() ? "" : ", " + n.device) + ")";
    }
  }
  g.source = "nccl-tests out-of-place busbw: " + sources;
  // What is printed must be what a scenario's profile section accepts.
  json section = gpu_profile_to_json(g);
  if (auto check = parse_gpu_profile(section, "profile.gpus." + *gpu); !check) {
    return Error{check.error().code, "the imported points fail the profile's checks: " + check.error().field + ": " +
                                         check.error().message, "files"};
  }
  json out = {{"profile", {{"gpus", {{*gpu, section}}}}}, {"imported", imported}};
  if (!notes.empty()) out["notes"] = notes;
  return out;
}

namespace {

// The plan's only GPU type, or `requested` when it is one of the plan's.
Expected<std::string> fitted_gpu_id(const Scenario& s, const std::string& requested) {
  std::vector<std::string> ids;
  for (const StagePlan& st : s.plan->stages) {
    const std::string& id = s.cluster.groups[st.group].gpu.id;
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  if (!requested.empty()) {
    if (std::find(ids.begin(), ids.end(), requested) != ids.end()) return requested;
    return Error{"bad_value", "no stage of the scenario's plan runs on GPU \"" + requested + "\"", "gpu"};
  }
  if (ids.size() == 1) return ids.front();
  return Error{"missing_field", "the plan uses several GPU types: say which one the log fits", "gpu"};
}

// The scenario's cluster as an object whose groups are listed (a preset id is expanded).
json cluster_object(const json& doc, const PresetCatalog& catalog) {
  const json& c = doc.at("cluster");
  json out = c.is_string() ? json{{"preset", c}} : c;
  if (!out.contains("groups") && out.contains("preset")) {
    out["groups"] = catalog.clusters.at(out.at("preset").get<std::string>()).at("groups");
  }
  return out;
}

// The GPU spec fields a fit sets, as JSON overrides.
json fitted_fields(const GpuSpec& g) {
  return {{"gemm_efficiency", g.gemm_efficiency}, {"attention_efficiency", g.attention_efficiency},
          {"hbm_efficiency", g.hbm_efficiency}, {"intra_node_efficiency", g.intra_node_efficiency},
          {"inter_node_efficiency", g.inter_node_efficiency},
          {"alltoall_intra_node_efficiency", g.alltoall_intra_node_efficiency},
          {"alltoall_inter_node_efficiency", g.alltoall_inter_node_efficiency},
          {"host_launch_us", g.host_launch_us}};
}

// The scenario document with every group of GPU `id` carrying the overrides.
json with_fitted_gpu(const json& doc, const Scenario& s, const std::string& id, const json& overrides,
                     const PresetCatalog& catalog) {
  json out = doc;
  json cluster = cluster_object(doc, catalog);
  for (size_t i = 0; i < s.cluster.groups.size(); ++i) {
    const GpuSpec& g = s.cluster.groups[i].gpu;
    if (g.id != id) continue;
    json& gpu = cluster["groups"][i]["gpu"];
    if (gpu.is_string()) gpu = json{{"preset", gpu}};
    for (auto it = overrides.begin(); it != overrides.end(); ++it) gpu[it.key()] = it.value();
    json assumed = json::array();  // fitted factors are no longer assumptions
    for (const std::string& a : g.assumed) {
      if (!overrides.contains(a)) assumed.push_back(a);
    }
    gpu["assumed"] = assumed;
  }
  out["cluster"] = cluster;
  return out;
}

std::vector<RankPeak> rank_peaks(const MegatronLog& log) {
  std::vector<RankPeak> peaks;
  for (const LoggedMemory& m : log.memory) peaks.push_back({m.rank, m.max_reserved_mb / 1024});  // MB = 2^20 B
  return peaks;
}

}  // namespace

Expected<json> import_log_request(const json& r, const PresetCatalog& catalog) {
  if (!r.is_object() || !r.contains("scenario")) return Error{"missing_field", "required: the run's scenario (with its plan)", "scenario"};
  const auto s = parse_scenario(r.at("scenario"), catalog);
  if (!s) return Error{s.error().code, s.error().message, s.error().field == "$" ? "scenario" : "scenario." + s.error().field};
  if (!s->plan) return Error{"missing_field", "the log's run: give the plan it ran with", "scenario.plan"};
  const auto text = string_field(r, "log", true);
  if (!text) return text.error();
  const auto log_name = string_field(r, "log_name", false);
  if (!log_name) return log_name.error();
  const std::string name = log_name->empty() ? "log" : *log_name;
  const auto requested = string_field(r, "gpu", false);
  if (!requested) return requested.error();
  const auto gpu = fitted_gpu_id(s.value(), *requested);
  if (!gpu) return gpu.error();
  std::optional<long long> warmup;
  if (r.contains("warmup_iterations") && !r.at("warmup_iterations").is_null()) {
    const json& w = r.at("warmup_iterations");
    if (!w.is_number_integer() || w.get<long long>() < 0) return Error{"bad_value", "expected an integer >= 0", "warmup_iterations"};
    warmup = w.get<long long>();
  }
  const auto log = parse_megatron_log(*text);
  if (!log) return Error{log.error().code, log.error().field + ": " + log.error().message, "log"};
  const auto steady = steady_iteration(log.value(), warmup);
  if (!steady) return Error{steady.error().code, steady.error().message, "warmup_iterations"};
  for (const LoggedIteration& it : log->iterations) {
    if (it.global_batch_size > 0 && it.global_batch_size != s->training.global_batch_size) {
      return Error{"bad_value", "the log's global batch size is " + std::to_string(it.global_batch_size) +
                                    ", the scenario's " + std::to_string(s->training.global_batch_size),
                   "scenario.training.global_batch_size"};
    }
  }
  const auto fit = fit_efficiency(s.value(), *s->plan, *gpu, steady->median_ms / 1e3);
  if (!fit) return Error{fit.error().code, fit.error().message, "scenario." + fit.error().field};
  json overrides = fitted_fields(fit->gpu);
  overrides["efficiency_source"] = "fitted by hapmoe profile import-log from the Megatron-LM log " + name + ": median " +
                                   json(steady->median_ms).dump() + " ms per iteration over " +
                                   std::to_string(steady->used) + " logged lines after warm-up; factors x" +
                                   json(fit->scale).dump() + " of " + fit->gpu.id + "'s";
  json fit_json = {{"gpu", *gpu}, {"scale", fit->scale}, {"reached", fit->reached},
                   {"logged_iteration_s", steady->median_ms / 1e3},
                   {"analytical_iteration_s", fit->analytical_iteration_s},
                   {"fitted_iteration_s", fit->fitted_iteration_s},
                   {"log", {{"name", name}, {"iterations_used", steady->used}, {"iterations_skipped", steady->skipped},
                            {"median_iteration_ms", steady->median_ms},
                            {"median_tflops_per_gpu", steady->median_tflops_per_gpu},
                            {"memory_lines", log->memory.size()},
                            {"iterations_repeated", log->repeated_iterations}}}};
  if (!log->memory.empty()) {
    const auto reserved = fit_reserved_memory_gib(s.value(), *s->plan, *gpu, rank_peaks(log.value()));
    if (reserved) {
      overrides["reserved_memory_gib"] = reserved.value();
      fit_json["reserved_memory_gib"] = reserved.value();
    }
  }
  fit_json["fitted"] = overrides;
  json out = {{"scenario", with_fitted_gpu(r.at("scenario"), s.value(), *gpu, overrides, catalog)}, {"fit", fit_json}};
  // What is printed must be a scenario that `validate` accepts.
  if (auto check = parse_scenario(out.at("scenario"), catalog); !check) {
    return Error{check.error().code, "the fitted scenario fails validation: " + check.error().field + ": " +
                                         check.error().message, "log"};
  }
  if (log->repeated_iterations > 0) {
    out["notes"] = json::array({name + ": " + std::to_string(log->repeated_iterations) +
                                " iteration lines repeat ones already read with the same numbers (the log given twice?); counted once"});
  }
  return out;
}

}  // namespace hapmoe
