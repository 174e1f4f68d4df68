#include "emit/flagscale_emit.hpp"
#include "emit/megatron_args.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <sstream>

#include "hapmoe/hetero_plan.hpp"
#include "emit/megatron_emit.hpp"
#include "hapmoe/parallel_config.hpp"

namespace hapmoe {

namespace {

// Megatron flags the hetero block replaces (parallel sizes, layout, VPP, recompute, batch).
const std::set<std::string> kReplaced = {"tensor_model_parallel_size",
                                         "pipeline_model_parallel_size",
                                         "context_parallel_size",
                                         "expert_model_parallel_size",
                                         "expert_tensor_parallel_size",
                                         "sequence_parallel",
                                         "pipeline_model_parallel_layout",
                                         "num_virtual_stages_per_pipeline_rank",
                                         "num_layers_per_virtual_pipeline_stage",
                                         "recompute_granularity",
                                         "recompute_method",
                                         "recompute_num_layers",
                                         "recompute_modules",
                                         "micro_batch_size"};

// Keys FlagScale's examples keep under `data` (the rest of the model flags go under `model`).
bool is_data_key(const std::string& k) {
  return k == "mock_data" || k == "data_path" || k == "split" || k.rfind("tokenizer", 0) == 0 ||
         k == "vocab_file" || k == "merge_file";
}

// Keys under `system` in FlagScale's examples (optimizer sharding, overlap, precision, logging).
bool is_system_key(const std::string& k) {
  for (const char* p : {"use_distributed_optimizer", "overlap_", "bf16", "fp16", "fp8",
                        "use_precision_aware", "main_grads", "main_params", "exp_avg", "optimizer_",
                        "grad_reduce", "cuda_graph", "log_", "delay_wgrad", "recompute_"}) {
    if (k.rfind(p, 0) == 0) return true;
  }
  return false;
}

// "--a-b 1 2 --c" -> [("a_b", ["1","2"]), ("c", [])]; double-quoted values keep their spaces.
std::vector<std::pair<std::string, std::vector<std::string>>> parse_args(const std::string& args) {
  std::vector<std::string> tokens;
  std::string cur;
  bool quoted = false, any = false;
  for (char c : args) {
    if (c == '"') {
      quoted = !quoted;
      any = true;
    } else if (c == ' ' && !quoted) {
      if (any) tokens.push_back(cur);
      cur.clear();
      any = false;
    } else {
      cur += c;
      any = true;
    }
  }
  if (any) tokens.push_back(cur);
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (const std::string& t : tokens) {
    if (t.rfind("--", 0) == 0) {
      std::string key = t.substr(2);
      std::replace(key.begin(), key.end(), '-', '_');
      out.push_back({key, {}});
    } else if (!out.empty()) {
      out.back().second.push_back(t);
    }
  }
  return out;
}

bool is_number(const std::string& v) {
  if (v.empty()) return false;
  char* end = nullptr;
  std::strtod(v.c_str(), &end);
  return end == v.c_str() + v.size();
}

// A YAML scalar: numbers and plain words as they are, anything else single-quoted.
std::string scalar(const std::string& v) {
  const bool plain = !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
           c == '/';
  });
  if (is_number(v) || (plain && v != "true" && v != "false" && v != "null")) return v;
  std::string q = "'";
  for (char c : v) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

std::string value_of(const std::vector<std::string>& vals) {
  if (vals.empty()) return "true";
  if (vals.size() == 1) return scalar(vals[0]);
  std::string out = "[";
  for (size_t i = 0; i < vals.size(); ++i) out += (i ? ", " : "") + scalar(vals[i]);
  return out + "]";
}

template <class T>
std::string flow_list(const std::vector<T>& v) {
  std::ostringstream o;
  o << "[";
  for (size_t i = 0; i < v.size(); ++i) o << (i ? ", " : "") << v[i];
  o << "]";
  return o.str();
}

bool mixed_vendors(const Scenario& s, const PlanSpec& p) {
  for (const StagePlan& st : p.stages) {
    if (s.cluster.groups[st.group].gpu.vendor !=
        s.cluster.groups[p.stages.front().group].gpu.vendor)
      return true;
  }
  return false;
}

void write_hetero_block(const Scenario& s, const PlanSpec& p, std::ostringstream& y) {
  const std::vector<HeteroMesh> meshes = hetero_meshes(p);
  std::vector<std::string> meshes_flat, types;
  std::vector<int> split, etps;
  for (const HeteroMesh& m : meshes) {
    for (int v : {m.tp, m.cp, m.ep, m.dp, m.pp}) meshes_flat.push_back(std::to_string(v));
    types.push_back("\"" + device_type_of(s.cluster.groups[m.group].gpu) + "\"");
    etps.push_back(m.etp);
  }
  for (const StagePlan& st : p.stages) split.push_back(st.layers);
  const bool tied = !s.model.untie_embeddings_and_output_weights || s.model.mtp_num_layers > 0;
  y << "  hetero:\n"
    << "    enable_hetero: true\n"
    << "    hetero_process_meshes: " << flow_list(meshes_flat) << "  # TP CP EP DP PP per mesh\n"
    << "    hetero_device_types: " << flow_list(types) << "\n"
    << "    hetero_current_device_type: " << types.front()
    << "  # the runner sets it per host from the hostfile\n"
    << "    hetero_pipeline_layer_split: " << flow_list(split) << "\n"
    << "    expert_tensor_parallel_size_per_process_mesh: " << flow_list(etps) << "\n"
    << "    standalone_embedding_stage: false\n";
  if (tied && meshes.front().dp != meshes.back().dp)
    y << "    use_partial_reduce_for_shared_embedding: true\n";
}

// Every stage recomputes the same selective modules: Megatron's --recompute-granularity
// selective and --recompute-modules, which FlagScale passes through under `system`.
bool one_selective_recompute(const PlanSpec& p) {
  if (p.stages.empty() || p.stages.front().recompute.kind != Recompute::Kind::kSelective) return false;
  for (const StagePlan& st : p.stages) {
    if (st.recompute != p.stages.front().recompute) return false;
  }
  return true;
}

void write_recompute_block(const PlanSpec& p, long long m, std::ostringstream& y) {
  bool any_full = false;
  std::vector<int> full;
  for (const StagePlan& st : p.stages) {
    full.push_back(st.recompute == Recompute::kFull ? 1 : 0);
    any_full = any_full || st.recompute == Recompute::kFull;
  }
  if (one_selective_recompute(p) || !any_full) return;  // selective: Megatron's own flags, kept in system
  auto runs = [&](const std::vector<int>& values) {
    std::string out;
    for (const auto& r : per_stage_recompute_runs(values, m))
      out += "      - " + flow_list(r) + "\n";
    return out;
  };
  y << "  recompute:\n"
    << "    recompute_granularity: full\n"
    << "    recompute_method: uniform\n"
    << "    recompute_num_layers: 1\n"
    << "    # per stage: [stages, micro-batches, value]; granularity 1 = full recompute, 0 = none\n"
    << "    recompute_granularity_per_stage_micro_batch:\n"
    << runs(full) << "    recompute_method_per_stage_micro_batch:\n"
    << runs(std::vector<int>(p.stages.size(), 0))
    << "    recompute_num_layers_per_stage_micro_batch:\n"
    << runs(full);
}

std::string hostfile_of(const Scenario& s, const PlanSpec& p) {
  std::ostringstream h;
  h << "# hosts in pipeline-stage order; FlagScale orders ranks by device type, then host\n";
  std::vector<long long> used(s.cluster.groups.size(), 0);
  for (const HeteroMesh& m : hetero_meshes(p)) {
    const NodeGroup& g = s.cluster.groups[m.group];
    const long long first = used[m.group] / g.gpus_per_node;
    used[m.group] += m.gpus();
    const long long end = (used[m.group] + g.gpus_per_node - 1) / g.gpus_per_node;
    for (long long k = first; k < end; ++k) {
      h << "group" << m.group << "-host" << k << " slots=" << g.gpus_per_node
        << " type=" << device_type_of(g.gpu) << "\n";
    }
  }
  return h.str();
}

}  // namespace

std::vector<std::string> hetero_plan_warnings(const Scenario& s, const PlanSpec& plan) {
  std::vector<std::string> w;
  if (mixed_vendors(s, plan)) {
    std::set<std::string> vendors;
    for (const StagePlan& st : plan.stages) vendors.insert(s.cluster.groups[st.group].gpu.vendor);
    std::string list;
    for (const auto& v : vendors) list += (list.empty() ? "" : " + ") + v;
    w.push_back(
        "stages span GPU vendors (" + list +
        "): one collective library cannot connect them; the config sets FlagScale's flagcx backend "
        "(distributed_backend: flagcx, needs FlagCX built for every vendor) -- or set "
        "hetero_use_cpu_communication: true for CPU (gloo) communication, much slower than the "
        "modelled inter-group link");
  }
  return w;
}

std::vector<std::vector<long long>> per_stage_recompute_runs(
    const std::vector<int>& value_per_stage, long long num_microbatches) {
  std::vector<std::vector<long long>> runs;
  for (size_t i = 0; i < value_per_stage.size();) {
    size_t j = i;
    while (j < value_per_stage.size() && value_per_stage[j] == value_per_stage[i]) ++j;
    runs.push_back({static_cast<long long>(j - i), num_microbatches, value_per_stage[i]});
    i = j;
  }
  return runs;
}

FlagscaleConfig flagscale_config(const Scenario& s, const PlanSpec& plan) {
  FlagscaleConfig out;
  PlanSpec p = plan;
  fill_stage_meshes(&p);
  const Mesh mesh0 = hetero_stage_mesh(p, 0);
  const long long m = num_microbatches(s.training, mesh0);
  bool any_tp = false;
  for (int i = 0; i < p.pp; ++i) any_tp = any_tp || stage_tp(p, i) > 1;
  const MegatronCommand cmd = megatron_command(s, p);
  const bool all_selective = one_selective_recompute(p);

  std::ostringstream y, model, data;
  y << "# FlagScale heterogeneous training (hapmoe plan): save as conf/train/hapmoe.yaml\n"
    << kFlagScaleNeeds << "\n"
    << "system:\n"
    << "  tensor_model_parallel_size: " << mesh0.tp << "\n"
    << "  pipeline_model_parallel_size: " << p.pp << "\n"
    << "  context_parallel_size: 1\n";
  if (s.model.is_moe()) {
    y << "  expert_model_parallel_size: " << mesh0.ep
      << "\n  expert_tensor_parallel_size: " << mesh0.etp << "\n";
  }
  y << "  sequence_parallel: " << (any_tp ? "true" : "false")
    << "  # FlagScale turns it off on tp-1 meshes\n";
  if (mixed_vendors(s, p)) y << "  distributed_backend: flagcx\n";
  for (const auto& [key, vals] : parse_args(cmd.args)) {
    const bool selective_flag = key == "recompute_granularity" || key == "recompute_modules";
    if (kReplaced.count(key) && !(selective_flag && all_selective)) continue;
    std::ostringstream& dst = is_system_key(key) ? y : is_data_key(key) ? data : model;
    dst << "  " << key << ": " << value_of(vals) << "\n";
  }
  // FlagScale's runner always passes --save <exp_dir>/checkpoints, and validate_args then needs a
  // save interval: one checkpoint at the end of the trial run.
  y << "  checkpoint:\n    save_interval: " << kTrainIters << "\n";
  write_hetero_block(s, p, y);
  write_recompute_block(p, m, y);
  y << "model:\n"
    << model.str() << "  micro_batch_size: " << p.micro_batch_size
    << "  # mesh i runs dp0 x micro_batch_size / dp_i sequences\n";
  y << "data:\n" << (data.str().empty() ? "  mock_data: true\n" : data.str());
  out.yaml = y.str();

  std::ostringstream e;
  e << "# conf/hapmoe.yaml; run: python run.py --config-path ./conf --config-name hapmoe "
       "action=run\n"
    << kFlagScaleNeeds << "\n"
    << "defaults:\n  - train: hapmoe\n  - _self_\n"
    << "experiment:\n  exp_name: hapmoe\n  exp_dir: ./outputs_hapmoe\n"
    << "  task:\n    type: train\n    backend: megatron\n    entrypoint: "
       "flagscale/train/train_gpt.py\n"
    << "  runner:\n    backend: torchrun\n    hostfile: hostfile\n"
    << "  envs:\n";
  for (const auto& [k, v] : cmd.env) e << "    " << k << ": " << scalar(v) << "\n";
  if (cmd.env.empty()) e << "    CUDA_DEVICE_MAX_CONNECTIONS: 1\n";
  e << "action: run\n";
  out.experiment_yaml = e.str();
  out.hostfile = hostfile_of(s, p);
  out.warnings = hetero_plan_warnings(s, p);
  return out;
}

}  // namespace hapmoe
