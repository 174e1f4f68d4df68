#include "io/profile_io.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "io/json_read.hpp"

namespace hapmoe {

using detail::fail;
using detail::index_path;
using detail::join_path;
using nlohmann::json;

namespace {

// Bounds: a layer point's parallel sizes as the plan's (1024 ways, 8192 experts); times, sizes
// and bandwidths: profile_io.hpp.
constexpr long long kMaxWays = 1024, kMaxEp = 8192, kMaxMbs = 4096, kMaxSeq = 1 << 24;
constexpr long long kMaxRanks = 1 << 20;

// An object at `path` whose keys are all in `known`.
const json& object_at(const json& v, const std::string& path, const std::set<std::string>& known) {
  if (!v.is_object()) fail("wrong_type", path, "expected an object, got " + detail::json_type_name(v));
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!known.count(it.key())) fail("unknown_field", join_path(path, it.key()), "unknown field \"" + it.key() + "\"");
  }
  return v;
}

const json& required(const json& obj, const std::string& path, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) fail("missing_field", join_path(path, key), std::string("required field \"") + key + "\" is missing");
  return *it;
}

int int_or(const json& obj, const std::string& path, const char* key, long long hi, int def) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return def;
  return static_cast<int>(detail::as_int(*it, join_path(path, key), 1, hi));
}

// "0.001", "1e+05", "5e-324" (for messages).
std::string short_number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

// A finite number from lo to hi (lo > 0).
double number_in(const json& obj, const std::string& path, const char* key, double lo, double hi) {
  const json& v = required(obj, path, key);
  const std::string at = join_path(path, key);
  if (!v.is_number()) fail("wrong_type", at, "expected a number, got " + detail::json_type_name(v));
  const double x = v.get<double>();
  if (!(x >= lo) || x > hi || !std::isfinite(x)) {
    fail("out_of_range", at, "expected a number from " + short_number(lo) + " to " + short_number(hi) + ", got " + short_number(x));
  }
  return x;
}

std::string one_of(const json& obj, const std::string& path, const char* key, const std::vector<std::string>& allowed) {
  const json& v = required(obj, path, key);
  const std::string at = join_path(path, key);
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "\"" : ", \"") + a + "\"";
  if (!v.is_string()) fail("wrong_type", at, "expected one of " + list + ", got " + detail::json_type_name(v));
  for (const auto& a : allowed) {
    if (v.get<std::string>() == a) return a;
  }
  fail("bad_value", at, "expected one of " + list + ", got \"" + v.get<std::string>() + "\"");
}

const json& bounded_list(const json& obj, const std::string& path, const char* key, size_t max) {
  static const json kEmpty = json::array();
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return kEmpty;
  const std::string at = join_path(path, key);
  if (!it->is_array()) fail("wrong_type", at, "expected a list, got " + detail::json_type_name(*it));
  if (it->size() > max) fail("too_many", at, "expected at most " + std::to_string(max) + " entries, got " + std::to_string(it->size()));
  return *it;
}

LayerPoint read_layer_point(const json& v, const std::string& path) {
  const json& o = object_at(v, path, {"kind", "tp", "cp", "ep", "etp", "micro_batch_size", "seq_length", "forward_ms", "backward_ms"});
  LayerPoint p;
  p.kind = one_of(o, path, "kind", {"dense", "moe"}) == "dense" ? LayerKind::kDense : LayerKind::kMoe;
  p.tp = int_or(o, path, "tp", kMaxWays, 1);
  p.cp = int_or(o, path, "cp", kMaxWays, 1);
  p.ep = int_or(o, path, "ep", kMaxEp, 1);
  p.etp = int_or(o, path, "etp", kMaxWays, 1);
  p.micro_batch_size = int_or(o, path, "micro_batch_size", kMaxMbs, 1);
  p.seq_length = static_cast<int>(detail::as_int(required(o, path, "seq_length"), join_path(path, "seq_length"), 1, kMaxSeq));
  p.forward_ms = number_in(o, path, "forward_ms", kMinProfileMs, kMaxProfileMs);
  p.backward_ms = number_in(o, path, "backward_ms", kMinProfileMs, kMaxProfileMs);
  return p;
}

CollectivePoint read_collective_point(const json& v, const std::string& path) {
  const json& o = object_at(v, path, {"op", "ranks", "placement", "bytes", "busbw_gbps"});
  CollectivePoint c;
  const std::string op = one_of(o, path, "op", {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"});
  c.op = op == "all_gather" ? CollectiveOp::kAllGather
         : op == "reduce_scatter" ? CollectiveOp::kReduceScatter
         : op == "all_to_all" ? CollectiveOp::kAllToAll : CollectiveOp::kAllReduce;
  c.ranks = detail::as_int(required(o, path, "ranks"), join_path(path, "ranks"), 2, kMaxRanks);
  const std::string where = one_of(o, path, "placement", {"intra_node", "inter_node", "inter_group"});
  c.placement = where == "inter_node" ? Placement::kInterNode
                : where == "inter_group" ? Placement::kInterGroup : Placement::kIntraNode;
  c.bytes = number_in(o, path, "bytes", kMinProfileBytes, kMaxProfileBytes);
  c.busbw_gbps = number_in(o, path, "busbw_gbps", kMinProfileBusbwGbps, kMaxProfileBusbwGbps);
  return c;
}

// Points with equal keys must agree: a second measurement of the same point with other values
// (e.g. nccl-tests output of two runs) made the lookups average or pick between them silently.
template <class Point, class Key, class Same>
void check_repeats(const std::vector<Point>& points, const std::string& list_path, Key key, Same same,
                   const char* what) {
  std::map<decltype(key(points.front())), size_t> first;
  for (size_t i = 0; i < points.size(); ++i) {
    const auto [it, fresh] = first.emplace(key(points[i]), i);
    if (fresh || same(points[it->second], points[i])) continue;
    fail("conflicting_points", index_path(list_path, i),
         "same " + std::string(what) + " as " + index_path(list_path, it->second).substr(list_path.rfind('.') + 1) +
             " with other values: a profile holds one measurement per point (keep one, or their mean)");
  }
}

void check_gpu_repeats(const GpuProfile& g, const std::string& path) {
  if (!g.layers.empty()) {
    check_repeats(
        g.layers, join_path(path, "layers"),
        [](const LayerPoint& p) { return std::make_tuple(p.kind, p.tp, p.cp, p.ep, p.etp, p.micro_batch_size, p.seq_length); },
        [](const LayerPoint& a, const LayerPoint& b) { return a.forward_ms == b.forward_ms && a.backward_ms == b.backward_ms; },
        "kind, tp, cp, ep, etp, micro_batch_size and seq_length");
  }
  if (!g.collectives.empty()) {
    check_repeats(
        g.collectives, join_path(path, "collectives"),
        [](const CollectivePoint& c) { return std::make_tuple(c.op, c.ranks, c.placement, c.bytes); },
        [](const CollectivePoint& a, const CollectivePoint& b) { return a.busbw_gbps == b.busbw_gbps; },
        "op, ranks, placement and bytes");
  }
}

GpuProfile read_gpu_profile(const json& v, const std::string& path) {
  const json& o = object_at(v, path, {"layers", "collectives", "source"});
  GpuProfile g;
  const json& layers = bounded_list(o, path, "layers", kMaxProfileLayerPoints);
  for (size_t i = 0; i < layers.size(); ++i) g.layers.push_back(read_layer_point(layers[i], index_path(join_path(path, "layers"), i)));
  const json& colls = bounded_list(o, path, "collectives", kMaxProfileCollectivePoints);
  for (size_t i = 0; i < colls.size(); ++i) {
    g.collectives.push_back(read_collective_point(colls[i], index_path(join_path(path, "collectives"), i)));
  }
  if (o.contains("source") && !o.at("source").is_null()) {
    if (!o.at("source").is_string()) fail("wrong_type", join_path(path, "source"), "expected a string");
    g.source = o.at("source").get<std::string>();
  }
  check_gpu_repeats(g, path);
  return g;
}

std::string cluster_gpu_ids(const ClusterSpec& cluster) {
  std::string ids;
  for (const auto& grp : cluster.groups) {
    if (ids.find("\"" + grp.gpu.id + "\"") == std::string::npos) ids += (ids.empty() ? "\"" : ", \"") + grp.gpu.id + "\"";
  }
  return ids;
}

ProfileSpec read_profile(const json& v, const std::string& path, const ClusterSpec& cluster) {
  const json& o = object_at(v, path, {"gpus"});
  const std::string gpath = join_path(path, "gpus");
  const json& gpus = required(o, path, "gpus");
  if (!gpus.is_object()) fail("wrong_type", gpath, "expected an object keyed by GPU id, got " + detail::json_type_name(gpus));
  if (gpus.size() > kMaxProfileGpus) fail("too_many", gpath, "expected at most " + std::to_string(kMaxProfileGpus) + " GPU types");
  ProfileSpec p;
  for (auto it = gpus.begin(); it != gpus.end(); ++it) {
    bool used = false;
    for (const auto& grp : cluster.groups) used = used || grp.gpu.id == it.key();
    if (!used) {
      fail("bad_value", join_path(gpath, it.key()),
           "no cluster group uses GPU \"" + it.key() + "\"; the cluster's GPU ids: " + cluster_gpu_ids(cluster));
    }
    p.gpus.emplace_back(it.key(), read_gpu_profile(it.value(), join_path(gpath, it.key())));
  }
  return p;
}

}  // namespace

Expected<ProfileSpec> parse_profile(const json& v, const std::string& path, const ClusterSpec& cluster) {
  try {
    return read_profile(v, path, cluster);
  } catch (const detail::InputFailure& e) {
    return e.error;
  }
}

Expected<GpuProfile> parse_gpu_profile(const json& v, const std::string& path) {
  try {
    return read_gpu_profile(v, path);
  } catch (const detail::InputFailure& e) {
    return e.error;
  }
}

json gpu_profile_to_json(const GpuProfile& g) {
  json layers = json::array(), colls = json::array();
  for (const LayerPoint& p : g.layers) {
    layers.push_back({{"kind", to_string(p.kind)}, {"tp", p.tp}, {"cp", p.cp}, {"ep", p.ep}, {"etp", p.etp},
                      {"micro_batch_size", p.micro_batch_size}, {"seq_length", p.seq_length},
                      {"forward_ms", p.forward_ms}, {"backward_ms", p.backward_ms}});
  }
  for (const CollectivePoint& c : g.collectives) {
    colls.push_back({{"op", to_string(c.op)}, {"ranks", c.ranks}, {"placement", to_string(c.placement)},
                     {"bytes", c.bytes}, {"busbw_gbps", c.busbw_gbps}});
  }
  json out = {{"layers", layers}, {"collectives", colls}};
  if (!g.source.empty()) out["source"] = g.source;
  return out;
}

json profile_to_json(const ProfileSpec& p) {
  json gpus = json::object();
  for (const auto& g : p.gpus) gpus[g.first] = gpu_profile_to_json(g.second);
  return {{"gpus", gpus}};
}

}  // namespace hapmoe
