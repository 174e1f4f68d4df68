// Test-side re-implementation of FlagScale's hetero validation, applied to an emitted train YAML
// and hostfile (no FlagScale code): FSTrainArguments.pre_validate_args / post_validate_args
// (flagscale/train/arguments.py), ProcessMesh's expert grid and ParallelContext's CP check
// (flagscale/train/hetero/parallel_context.py), world size against the hostfile, and the
// RankMapper order: ranks sorted by device type index, then host order, meshes on consecutive
// logical ranks -- every stage must land on hosts of its mesh's device type.
#pragma once

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace hapmoe::testing {

struct FlagscaleYaml {
  std::map<std::string, std::string> scalars;             // key -> value (last one wins)
  std::map<std::string, std::vector<std::string>> lists;  // key -> flow-list items
  std::map<std::string, std::vector<std::vector<long long>>> nested;  // key -> "- [..]" rows
};

inline std::string fs_trim(std::string s) {
  const auto a = s.find_first_not_of(" \t\"'"), b = s.find_last_not_of(" \t\"'");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

inline std::vector<std::string> fs_flow_items(const std::string& v) {
  std::vector<std::string> out;
  std::stringstream ss(v.substr(1, v.find(']') - 1));
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(fs_trim(item));
  return out;
}

// Reads "key: value", "key: [a, b]" and "key:" followed by "- [..]" rows; comments dropped.
inline FlagscaleYaml parse_flagscale_yaml(const std::string& text) {
  FlagscaleYaml y;
  std::stringstream in(text);
  std::string line, open_key;
  while (std::getline(in, line)) {
    const auto hash = line.find("  #");
    if (hash != std::string::npos) line = line.substr(0, hash);
    if (fs_trim(line).empty() || fs_trim(line)[0] == '#') continue;
    const std::string t = fs_trim(line);
    if (t.rfind("- [", 0) == 0 && !open_key.empty()) {
      std::vector<long long> row;
      for (const auto& x : fs_flow_items(t.substr(2))) row.push_back(std::stoll(x));
      y.nested[open_key].push_back(row);
      continue;
    }
    const auto colon = t.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = t.substr(0, colon), value = fs_trim(t.substr(colon + 1));
    open_key = value.empty() ? key : "";
    if (!value.empty() && value[0] == '[')
      y.lists[key] = fs_flow_items(value);
    else if (!value.empty())
      y.scalars[key] = value;
  }
  return y;
}

// Every violation FlagScale would raise for this config on this hostfile (empty = accepted).
inline std::vector<std::string> flagscale_hetero_errors(const std::string& yaml,
                                                        const std::string& hostfile) {
  std::vector<std::string> err;
  const FlagscaleYaml y = parse_flagscale_yaml(yaml);
  auto num = [&](const char* k, long long def) {
    auto it = y.scalars.find(k);
    return it == y.scalars.end() ? def : std::stoll(it->second);
  };
  auto flag = [&](const char* k) {
    auto it = y.scalars.find(k);
    return it != y.scalars.end() && it->second == "true";
  };
  auto ints = [&](const char* k) {
    std::vector<long long> v;
    auto it = y.lists.find(k);
    if (it != y.lists.end())
      for (const auto& x : it->second) v.push_back(std::stoll(x));
    return v;
  };
  if (!flag("enable_hetero")) err.push_back("enable_hetero is not true");
  const std::vector<long long> meshes = ints("hetero_process_meshes");
  if (meshes.empty() || meshes.size() % 5 != 0) {
    err.push_back("hetero_process_meshes length not divisible by 5");
    return err;
  }
  const size_t n = meshes.size() / 5;
  auto at = [&](size_t i, int f) { return meshes[i * 5 + f]; };  // TP CP EP DP PP
  const std::vector<long long> etps = ints("expert_tensor_parallel_size_per_process_mesh");
  if (!etps.empty() && etps.size() != n)
    err.push_back("expert_tensor_parallel_size_per_process_mesh length");
  const long long mbs = num("micro_batch_size", 1), dp0 = at(0, 3);
  long long pp_sum = 0, world = 0;
  for (size_t i = 0; i < n; ++i) {
    if (dp0 * mbs % at(i, 3) != 0)
      err.push_back("data_parallel_size * micro_batch_size not divisible by mesh dp");
    if (at(i, 1) != at(0, 1)) err.push_back("hetero_process_meshes_cp not all the same");
    if (at(i, 1) != 1) err.push_back("Context parallelism is not supported");
    const long long etp = etps.empty() ? at(i, 0) : etps[i];
    const long long mesh_world = at(i, 0) * at(i, 1) * at(i, 3) * at(i, 4);
    if (mesh_world % (etp * at(i, 2) * at(i, 4)) != 0)
      err.push_back("decoder world_size not divisible by etp*ep*pp");
    pp_sum += at(i, 4);
    world += mesh_world;
  }
  const long long pp = num("pipeline_model_parallel_size", 1);
  if (pp != pp_sum) err.push_back("pipeline_model_parallel_size != sum of hetero pp");
  if (flag("standalone_embedding_stage")) err.push_back("standalone not supported");
  const bool tied = !flag("untie_embeddings_and_output_weights") || num("mtp_num_layers", 0) > 0;
  if (tied) {
    if (at(0, 0) != at(n - 1, 0)) err.push_back("tied embeddings: first and last tp differ");
    const long long a = at(0, 3), b = at(n - 1, 3);
    if (a != b && flag("use_distributed_optimizer")) {
      if (a % b != 0 && b % a != 0) err.push_back("tied embeddings: first/last dp do not divide");
      if (!flag("use_partial_reduce_for_shared_embedding"))
        err.push_back("use_partial_reduce_for_shared_embedding needed");
    }
  }
  if (y.scalars.count("num_layers_per_virtual_pipeline_stage") ||
      y.scalars.count("num_virtual_stages_per_pipeline_rank")) {
    err.push_back("virtual pipeline not support now!");
  }
  const std::vector<long long> split = ints("hetero_pipeline_layer_split");
  long long layers = 0;
  for (long long x : split) layers += x;
  if (layers != num("num_layers", -1))
    err.push_back("sum of hetero_pipeline_layer_split != num_layers");
  if (static_cast<long long>(split.size()) != pp)
    err.push_back("len(hetero_pipeline_layer_split) != pp");
  const auto types_it = y.lists.find("hetero_device_types");
  const std::vector<std::string> types =
      types_it == y.lists.end() ? std::vector<std::string>{} : types_it->second;
  if (types.size() != n) err.push_back("len(hetero_device_types) != number of meshes");
  const auto cur = y.scalars.find("hetero_current_device_type");
  if (cur == y.scalars.end() ||
      std::find(types.begin(), types.end(), fs_trim(cur->second)) == types.end()) {
    err.push_back("hetero_current_device_type not in hetero_device_types");
  }
  // Per-stage recompute (post_validate_args).
  const long long m = num("global_batch_size", 0) / (mbs * dp0);
  for (const char* k :
       {"recompute_granularity_per_stage_micro_batch", "recompute_method_per_stage_micro_batch",
        "recompute_num_layers_per_stage_micro_batch"}) {
    auto it = y.nested.find(k);
    if (it == y.nested.end()) continue;
    if (std::string(k).find("granularity") != std::string::npos &&
        (y.scalars.count("recompute_granularity") == 0 ||
         y.scalars.at("recompute_granularity") != "full" ||
         y.scalars.count("recompute_method") == 0)) {
      err.push_back("per-stage recompute needs recompute_granularity full and a recompute_method");
    }
    long long stages = 0;
    for (const auto& row : it->second) {
      stages += row[0];
      long long mbs_sum = 0;
      for (size_t j = 1; j + 1 < row.size(); j += 2) {
        mbs_sum += row[j];
        const bool binary = std::string(k).find("num_layers") == std::string::npos;
        if (binary && row[j + 1] != 0 && row[j + 1] != 1)
          err.push_back(std::string(k) + " values must be 0 or 1");
      }
      if (mbs_sum != m)
        err.push_back(std::string(k) + ": micro-batch counts do not add up to " +
                      std::to_string(m));
    }
    if (stages != pp) err.push_back(std::string(k) + ": stage counts do not add up to pp");
  }
  // Hostfile: world size and the RankMapper order.
  std::vector<std::string> rank_type;  // physical rank -> device type
  std::stringstream hs(hostfile);
  std::string line;
  while (std::getline(hs, line)) {
    if (fs_trim(line).empty() || fs_trim(line)[0] == '#') continue;
    const auto slots = line.find("slots="), type = line.find("type=");
    if (slots == std::string::npos || type == std::string::npos) {
      err.push_back("hostfile line without slots= and type=: " + line);
      continue;
    }
    const long long k = std::stoll(line.substr(slots + 6));
    for (long long r = 0; r < k; ++r) rank_type.push_back(fs_trim(line.substr(type + 5)));
  }
  if (static_cast<long long>(rank_type.size()) != world) {
    err.push_back("World size mismatch: hostfile " + std::to_string(rank_type.size()) +
                  ", meshes " + std::to_string(world));
    return err;
  }
  std::vector<long long> logical(rank_type.size());
  for (size_t r = 0; r < logical.size(); ++r) logical[r] = static_cast<long long>(r);
  auto type_index = [&](const std::string& t) {
    return std::find(types.begin(), types.end(), t) - types.begin();
  };
  std::stable_sort(logical.begin(), logical.end(), [&](long long a, long long b) {
    return type_index(rank_type[a]) < type_index(rank_type[b]);
  });
  long long offset = 0;
  for (size_t i = 0; i < n; ++i) {
    const long long size = at(i, 0) * at(i, 1) * at(i, 3) * at(i, 4);
    for (long long r = offset; r < offset + size; ++r) {
      if (rank_type[logical[r]] != types[i])
        err.push_back("mesh " + std::to_string(i) + " has a rank on a host of another type");
    }
    offset += size;
  }
  return err;
}

}  // namespace hapmoe::testing
