#include "search/candidate_cost.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "hapmoe/cost_memory.hpp"
#include "hapmoe/evaluate.hpp"

namespace hapmoe {

size_t StageModelCache::KeyHash::operator()(const Key& k) const {
  Fnv1a h;
  for (int v : {k.tp, k.cp, k.ep, k.etp, k.mbs, k.recompute, k.ep_overlap, k.sequence_parallel, k.dispatch, k.graphs,
                k.group}) {
    h.add(static_cast<uint32_t>(v));
  }
  return static_cast<size_t>(h.value());
}

namespace {
// Whether stage models of groups a and b are the same (a stage's cost does not depend on how many
// nodes its group has).
bool same_models(const NodeGroup& a, const NodeGroup& b) {
  return a.gpu == b.gpu && a.gpus_per_node == b.gpus_per_node && a.inter_node_gbps == b.inter_node_gbps;
}
}  // namespace

StageModelCache::StageModelCache(const Scenario& s) : s_(s) {
  const auto& groups = s.cluster.groups;
  for (size_t g = 0; g < groups.size(); ++g) {
    size_t rep = g;
    for (size_t h = 0; h < g; ++h) {
      if (same_models(groups[h], groups[g])) {
        rep = h;
        break;
      }
    }
    model_group_.push_back(static_cast<int>(rep));
  }
}

StageModelCache::StageModelCache(const Scenario& s, StageModelCache& models_from) : StageModelCache(s) {
  from_ = &models_from;
  const auto& theirs = models_from.s_.cluster.groups;
  for (const NodeGroup& g : s.cluster.groups) {
    int from = -1;
    for (size_t h = 0; h < theirs.size() && from < 0; ++h) {
      if (same_models(theirs[h], g)) from = static_cast<int>(h);
    }
    from_group_.push_back(from);
  }
}

const ModelShape& StageModelCache::shape(int tp) {
  auto& shape = shapes_[tp];
  if (!shape) shape = std::make_unique<ModelShape>(derive_model_shape(s_.model, tp));
  return *shape;
}

std::pair<double, double> StageModelCache::layer_params(const Mesh& mesh) {
  const long long grid = static_cast<long long>(mesh.ep) * mesh.etp;
  const long long key = static_cast<long long>(mesh.tp) << 32 | grid;
  if (key == last_params_key_) return last_params_;  // consecutive shapes mostly share it
  auto it = params_.find(key);
  if (it != params_.end()) {
    last_params_key_ = key;
    last_params_ = it->second;
    return it->second;
  }
  const ModelShape& sh = shape(mesh.tp);
  double dense = 0, expert = 0;
  for (int l = 0; l < s_.model.num_layers; ++l) {
    dense += sh.layer_tp_sharded_params(s_.model, l) / mesh.tp + sh.layer_replicated_params(s_.model, l);
    expert += sh.layer_expert_params(s_.model, l) / static_cast<double>(grid);
  }
  last_params_key_ = key;
  last_params_ = {dense, expert};
  return params_.emplace(key, std::make_pair(dense, expert)).first->second;
}

const StageCostModel* StageModelCache::get(const Mesh& mesh, int group) {
  if (from_ && from_group_[group] >= 0) return from_->get(mesh, from_group_[group]);
  group = model_group_[group];
  const Key key{mesh.tp, mesh.cp, mesh.ep, mesh.etp, mesh.micro_batch_size, mesh.recompute.key(),
                mesh.ep_comm_overlap ? 1 : 0, mesh.sequence_parallel ? 1 : 0, static_cast<int>(mesh.dispatch),
                mesh.cuda_graphs.key(), group};
  return &models_.get(key, [&] { return StageCostModel(s_, shape(mesh.tp), mesh, group); });
}

SplitProblem make_split_problem(const Scenario& s, const Mesh& mesh, const std::vector<int>& stage_groups,
                                StageModelCache& cache) {
  SplitProblem p;
  p.mesh = mesh;
  p.stage_models.reserve(stage_groups.size());
  for (size_t i = 0; i < stage_groups.size(); ++i) {
    const bool same = i > 0 && stage_groups[i] == stage_groups[i - 1];
    p.stage_models.push_back(same ? p.stage_models.back() : cache.get(mesh, stage_groups[i]));
  }
  p.links = stage_links(s.cluster, mesh.stage_gpus(), stage_groups);
  p.num_layers = s.model.num_layers;
  p.num_microbatches = num_microbatches(s.training, mesh);
  p.vpp = mesh.vpp;
  return p;
}

namespace {
// Bytes per parameter no smaller than any stage charges (the bounds must never overestimate
// memory): FP8 weight copies left out; with fp8_param_gather every weight may be the FP8 copy.
WeightBytes bound_weight_bytes(const TrainingSpec& t, const Mesh& mesh) {
  WeightBytes b = weight_bytes(t, mesh.optimizer_offload_fraction);
  if (b.fp8_param_gather) b.param = std::min(b.param, b.fp8_weight);
  b.fp8_weight = 0;
  b.fp8_param_gather = false;
  return b;
}

// [n] = sum of the n smallest values. Layer terms come in a few kinds (dense / MoE, windowed or
// not): with at most 8 distinct values, the sorted sequence is each distinct value (ascending)
// repeated its count, summed in that order without building it (the same sums).
std::vector<double> sorted_prefix_sums(const std::vector<double>& v) {
  constexpr int kMaxDistinct = 8;
  double values[kMaxDistinct];
  size_t counts[kMaxDistinct];
  int distinct = 0;
  bool few = true;
  for (double x : v) {
    int k = 0;
    while (k < distinct && !(values[k] == x)) ++k;
    if (k == distinct) {
      if (distinct == kMaxDistinct) {
        few = false;
        break;
      }
      values[k] = x;
      counts[k] = 0;
      ++distinct;
    }
    ++counts[k];
  }
  std::vector<double> p(v.size() + 1, 0.0);
  if (!few) {
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i) p[i + 1] = p[i] + sorted[i];
    return p;
  }
  int order[kMaxDistinct];
  for (int k = 0; k < distinct; ++k) {  // insertion sort of the distinct values
    int at = k;
    while (at > 0 && values[k] < values[order[at - 1]]) {
      order[at] = order[at - 1];
      --at;
    }
    order[at] = k;
  }
  size_t i = 0;
  for (int k = 0; k < distinct; ++k) {
    const double x = values[order[k]];
    for (size_t c = 0; c < counts[order[k]]; ++c, ++i) p[i + 1] = p[i] + x;
  }
  return p;
}
}  // namespace

// sorted_prefix_sums of a per-layer value that depends on the layer only through its kind:
// value[k] repeated model.kind_layers(k) times (kinds with use[k] only, when given). Sums the
// distinct values in ascending order their counts of times: the sorted sequence's sums.
std::vector<double> kind_prefix_sums(const StageCostModel& model, const double* value,
                                     const bool* use = nullptr) {
  constexpr int kMaxKinds = 8;
  int order[kMaxKinds];
  int n = 0;
  size_t total = 0;
  for (int k = 0; k < model.num_kinds(); ++k) {
    if (use && !use[k]) continue;
    int at = n++;  // insertion sort by value
    while (at > 0 && value[k] < value[order[at - 1]]) {
      order[at] = order[at - 1];
      --at;
    }
    order[at] = k;
    total += static_cast<size_t>(model.kind_layers(k));
  }
  std::vector<double> p(total + 1, 0.0);
  size_t i = 0;
  for (int o = 0; o < n; ++o) {
    const double x = value[order[o]];
    for (int c = 0; c < model.kind_layers(order[o]); ++c, ++i) p[i + 1] = p[i] + x;
  }
  return p;
}

GroupLayerTimes group_layer_times(const StageCostModel& model, int num_layers) {
  if (num_layers == static_cast<int>(model.num_layers()) && model.num_kinds() <= 8) {
    // By kind: the same per-layer values, min and sorted sums.
    GroupLayerTimes t;
    double value[8];
    bool moe[8];
    for (int k = 0; k < model.num_kinds(); ++k) {
      const LayerCost& c = model.kind(k);
      value[k] = c.fwd_s + c.bwd_s + c.tp_s + c.cp_s + c.ep_s;
      moe[k] = c.expert_params > 0;
    }
    t.layer_s.resize(num_layers);
    t.min_layer_s = 1e300;
    for (int l = 0; l < num_layers; ++l) {
      t.layer_s[l] = value[model.kind_of(l)];
      t.min_layer_s = std::min(t.min_layer_s, t.layer_s[l]);
    }
    t.cheapest_sum_s = kind_prefix_sums(model, value);
    t.cheapest_moe_sum_s = kind_prefix_sums(model, value, moe);
    t.kind_s.assign(value, value + model.num_kinds());
    t.kind_of = &model.kinds_by_layer();
    return t;
  }
  GroupLayerTimes t;
  t.layer_s.resize(num_layers);
  t.min_layer_s = 1e300;
  for (int l = 0; l < num_layers; ++l) {
    const LayerCost& c = model.layer(l);
    t.layer_s[l] = c.fwd_s + c.bwd_s + c.tp_s + c.cp_s + c.ep_s;
    t.min_layer_s = std::min(t.min_layer_s, t.layer_s[l]);
  }
  t.cheapest_sum_s = sorted_prefix_sums(t.layer_s);
  std::vector<double> moe;
  for (int l = 0; l < num_layers; ++l) {
    if (model.layer(l).expert_params > 0) moe.push_back(t.layer_s[l]);
  }
  t.cheapest_moe_sum_s = sorted_prefix_sums(std::move(moe));
  return t;
}

namespace {

// Layers one stage of a group can hold within per-micro-batch time C (each layer >= min_layer).
double layers_within(double c, double min_layer_s, bool fractional) {
  const double n = c / min_layer_s * (1 + 1e-12);  // no rounding loss at exact multiples
  return fractional ? n : std::floor(n);
}

}  // namespace


double cheapest_layers_sum_s(const std::vector<const GroupLayerTimes*>& times, int num_layers) {
  // By kind when every group has them: each layer's least time is its kind's least time (the
  // min over the same values), summed in layer order as below.
  double least[kMaxLayerKinds];
  size_t kinds = 0;
  if (cheapest_kind_times(times, num_layers, least, &kinds)) return kind_times_sum_s(*times.front()->kind_of, least);
  double sum_c = 0;
  for (int l = 0; l < num_layers; ++l) {
    double best = 1e300;
    for (const GroupLayerTimes* t : times) best = std::min(best, t->layer_s[l]);
    sum_c += best;
  }
  return sum_c;
}

bool cheapest_kind_times(const std::vector<const GroupLayerTimes*>& times, int num_layers, double* least, size_t* kinds) {
  bool by_kind = !times.empty() && times.front()->kind_of && times.front()->kind_s.size() <= kMaxLayerKinds &&
                 static_cast<int>(times.front()->kind_of->size()) == num_layers;
  for (const GroupLayerTimes* t : times) {
    by_kind = by_kind && t->kind_of &&
              (t->kind_of == times.front()->kind_of || *t->kind_of == *times.front()->kind_of) &&
              t->kind_s.size() == times.front()->kind_s.size();
  }
  if (!by_kind) return false;
  *kinds = times.front()->kind_s.size();
  for (size_t k = 0; k < *kinds; ++k) {
    least[k] = 1e300;
    for (const GroupLayerTimes* t : times) least[k] = std::min(least[k], t->kind_s[k]);
  }
  return true;
}

double kind_times_sum_s(const std::vector<unsigned char>& kind_of, const double* least) {
  double sum_c = 0;
  for (unsigned char k : kind_of) sum_c += least[k];
  return sum_c;
}

double set_lower_bound_s(const std::vector<const GroupLayerTimes*>& times, const std::vector<int>& stages,
                         int num_layers, long long num_microbatches, int vpp, bool fractional,
                         const std::vector<int>* max_layers, const double* layers_sum_c) {
  if (max_layers) {
    long long room = 0;
    for (size_t g = 0; g < times.size(); ++g) {
      if ((*max_layers)[g] < vpp) return 1e300;  // a stage of this group cannot hold its chunks
      room += static_cast<long long>(stages[g]) * (*max_layers)[g];
    }
    if (room < num_layers) return 1e300;
  }
  const double sum_c = layers_sum_c ? *layers_sum_c : cheapest_layers_sum_s(times, num_layers);
  double floor_c = 0, capacity_per_s = 0;
  int pp = 0;
  for (size_t g = 0; g < times.size(); ++g) {
    floor_c = std::max(floor_c, vpp * times[g]->min_layer_s);
    capacity_per_s += stages[g] / times[g]->min_layer_s;
    pp += stages[g];
  }
  double max_c = std::max({floor_c, sum_c / pp, num_layers / capacity_per_s});
  for (const GroupLayerTimes* t : times) max_c = std::max(max_c, t->cheapest_sum_s[vpp]);
  // The MoE layers alone, at their own least time (a model whose dense layers are cheaper, as
  // DeepSeek-V3's first three, would otherwise be bounded at the dense layers' time).
  const int num_moe = static_cast<int>(times.front()->cheapest_moe_sum_s.size()) - 1;
  const bool mixed = num_moe > 0 && num_moe < num_layers;
  // A group's least layer time, and its least MoE layer time (called per entry of a search: no
  // vectors of them are made).
  const auto least_layer = [&](size_t g) { return times[g]->min_layer_s; };
  const auto least_moe = [&](size_t g) { return times[g]->cheapest_moe_sum_s[1]; };
  if (mixed) {
    double moe_per_s = 0;
    for (size_t g = 0; g < times.size(); ++g) moe_per_s += stages[g] / least_moe(g);
    max_c = std::max(max_c, num_moe / moe_per_s);
  }
  if (!fractional) {
    // The least breakpoint C = n x least(g) at which the stages can hold all `count` layers of
    // least time least(g) per group (each stage at most max_layers).
    auto least_holding = [&](int count, const auto& least) {
      auto holds = [&](double c) {
        double n = 0;
        for (size_t g = 0; g < times.size(); ++g) {
          double per_stage = layers_within(c, least(g), false);
          if (max_layers) per_stage = std::min<double>(per_stage, (*max_layers)[g]);
          n += stages[g] * per_stage;
        }
        return n >= count;
      };
      double best = 1e300;
      for (size_t g = 0; g < times.size(); ++g) {
        // Smallest n with holds(n x least): binary search on n in [1, hi], where hi is the
        // largest n whose breakpoint is below the best so far (larger ones cannot lower it).
        const double m = least(g);
        int lo = 1, hi = count;
        if (best < 1e300) {
          hi = static_cast<int>(std::min<double>(count, std::floor(best / m)));
          while (hi >= 1 && hi * m >= best) --hi;
          while (hi < count && (hi + 1) * m < best) ++hi;
          if (hi < 1) continue;
        }
        if (!holds(hi * m)) continue;
        while (lo < hi) {
          const int mid = lo + (hi - lo) / 2;
          if (holds(mid * m)) hi = mid; else lo = mid + 1;
        }
        best = std::min(best, lo * m);
      }
      return best;
    };
    double best = least_holding(num_layers, least_layer);
    if (mixed) best = std::max(best < 1e300 ? best : 0.0, least_holding(num_moe, least_moe));
    if (best < 1e300) max_c = std::max(max_c, best);
  }
  const double v = vpp;
  return sum_c / v + (static_cast<double>(num_microbatches) - 1 / v) * max_c;
}

GroupBoundTerms group_bound_terms(const Scenario& s, const StageCostModel& model, const GroupLayerTimes& times,
                                  const Mesh& mesh) {
  GroupBoundTerms t;
  t.times = &times;
  const GpuSpec& gpu = s.cluster.groups[model.group()].gpu;
  t.room_bytes = (gpu.memory_gib - gpu.reserved_memory_gib) * kGiB;
  const long long dense_shards = static_cast<long long>(mesh.dp) * mesh.cp;
  // A layer's weights, gradients and optimizer state per GPU (sharded as the mesh shards them).
  const auto state_bytes = [&](const LayerCost& c) {
    return weight_memory(c.dense_params, c.expert_params, dense_shards, mesh.expert_dp(),
                         s.training.use_distributed_optimizer, bound_weight_bytes(s.training, mesh))
        .total();
  };
  if (s.model.num_layers == model.num_layers() && model.num_kinds() <= 8) {
    // By kind: the same per-layer bytes and sorted sums.
    double bytes[8], act[8];
    bool moe[8];
    for (int k = 0; k < model.num_kinds(); ++k) {
      const LayerCost& c = model.kind(k);
      bytes[k] = state_bytes(c);
      act[k] = c.activation_bytes;
      moe[k] = c.expert_params > 0;
    }
    t.lightest_bytes = kind_prefix_sums(model, bytes);
    t.lightest_act_bytes = kind_prefix_sums(model, act);
    t.lightest_moe_bytes = kind_prefix_sums(model, bytes, moe);
    t.lightest_moe_act_bytes = kind_prefix_sums(model, act, moe);
  } else {
    std::vector<double> bytes(s.model.num_layers), act(s.model.num_layers);
    for (int l = 0; l < s.model.num_layers; ++l) {
      const LayerCost& c = model.layer(l);
      bytes[l] = state_bytes(c);
      act[l] = c.activation_bytes;
    }
    std::vector<double> moe_bytes, moe_act;
    for (int l = 0; l < s.model.num_layers; ++l) {
      if (model.layer(l).expert_params > 0) {
        moe_bytes.push_back(bytes[l]);
        moe_act.push_back(act[l]);
      }
    }
    t.lightest_bytes = sorted_prefix_sums(bytes);
    t.lightest_act_bytes = sorted_prefix_sums(act);
    t.lightest_moe_bytes = sorted_prefix_sums(std::move(moe_bytes));
    t.lightest_moe_act_bytes = sorted_prefix_sums(std::move(moe_act));
  }
  t.first_extra_s = model.first_extra_s();
  t.last_extra_s = model.last_extra_s();
  const WeightBytes wb = bound_weight_bytes(s.training, mesh);
  auto weights = [&](double dense, double expert) {
    return weight_memory(dense, expert, dense_shards, mesh.expert_dp(), s.training.use_distributed_optimizer, wb)
        .total();
  };
  t.first_extra_bytes = weights(model.first_extra_dense_params(), 0);
  t.last_extra_bytes = weights(model.last_extra_dense_params(), model.last_extra_expert_params());
  t.embedding_copy_bytes = weights(model.embedding_copy_params(), 0);
  t.first_extra_act_bytes = model.first_extra_activation_bytes();
  t.last_extra_act_bytes = model.last_extra_activation_bytes();
  t.every_stage_bytes = model.working_bytes();
  t.graph_bytes_single = cuda_graph_memory_gib(mesh.cuda_graphs, 1) * kGiB;
  t.graph_bytes_pipelined = cuda_graph_memory_gib(mesh.cuda_graphs, 2) * kGiB;
  t.max_layers = max_layers_in_memory(t);
  return t;
}

namespace {

// Most layers a stage of group t can hold at a position with in_flight micro-batches in memory
// (a prefix-sum search: bytes grow with n).
// extra_bytes: what the stage needs besides its layers. bytes / act_bytes: the lightest layers'
// prefix sums (all layers, or the MoE layers alone).
int layers_in_memory(const GroupBoundTerms& t, double in_flight, double extra_bytes, const std::vector<double>& bytes,
                     const std::vector<double>& act_bytes) {
  int lo = 0, hi = static_cast<int>(bytes.size()) - 1;
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;
    if (bytes[mid] + in_flight * act_bytes[mid] + extra_bytes <= t.room_bytes * (1 + 1e-12)) lo = mid; else hi = mid - 1;
  }
  return lo;
}

int layers_in_memory(const GroupBoundTerms& t, double in_flight, double extra_bytes = 0) {
  return layers_in_memory(t, in_flight, extra_bytes, t.lightest_bytes, t.lightest_act_bytes);
}

// What a stage at position i of pp needs besides its layers (no more than cost() charges).
double position_extra_bytes(const GroupBoundTerms& t, int i, int pp, double in_flight) {
  double b = t.every_stage_bytes + (pp > 1 ? t.graph_bytes_pipelined : t.graph_bytes_single);
  if (i == 0) b += t.first_extra_bytes + in_flight * t.first_extra_act_bytes;
  if (i == pp - 1) b += t.last_extra_bytes + t.last_extra_act_bytes + (pp > 1 ? t.embedding_copy_bytes : 0);
  return b;
}

// Most layers whose cheapest times fit in c.
int layers_in_time(const std::vector<double>& sum, double c) {
  return static_cast<int>(std::upper_bound(sum.begin(), sum.end(), c * (1 + 1e-12)) - sum.begin()) - 1;
}
int layers_in_time(const GroupBoundTerms& t, double c) { return layers_in_time(t.times->cheapest_sum_s, c); }

}  // namespace

int max_layers_in_memory(const GroupBoundTerms& t) { return layers_in_memory(t, 1.0); }

PositionBound::PositionBound(const std::vector<const GroupBoundTerms*>& terms, int pp, int num_layers,
                             long long num_microbatches, int vpp, std::vector<int> blocks)
    : terms_(terms) {
  reset(pp, num_layers, num_microbatches, vpp, blocks);
}

size_t PositionBound::RowsKeyHash::operator()(const RowsKey& k) const {
  Fnv1a h;
  h.add(reinterpret_cast<uintptr_t>(k.terms));
  h.add(static_cast<uint64_t>(k.pp) << 32 | static_cast<uint32_t>(k.vpp));
  h.add(static_cast<uint64_t>(k.m) << 1 | (k.moe ? 1 : 0));
  return static_cast<size_t>(h.value());
}

PositionBound::Rows PositionBound::make_rows(const GroupBoundTerms& t) const {
  Rows r;
  r.ints.assign(2 * static_cast<size_t>(pp_), 0);
  r.reals.assign(2 * static_cast<size_t>(pp_), 0.0);
  int* const fit = r.ints.data();
  int* const fit_moe = fit + pp_;
  double* const extra = r.reals.data();
  double* const floor = extra + pp_;
  for (int i = 0; i < pp_; ++i) {
    const double in_flight = in_flight_microbatches(i, pp_, vpp_, m_);
    const double extra_bytes = position_extra_bytes(t, i, pp_, in_flight);
    fit[i] = layers_in_memory(t, in_flight, extra_bytes);
    if (num_moe_ > 0) {
      fit_moe[i] = layers_in_memory(t, in_flight, extra_bytes, t.lightest_moe_bytes, t.lightest_moe_act_bytes);
    }
    extra[i] = (i == 0 ? t.first_extra_s : 0) + (i == pp_ - 1 ? t.last_extra_s : 0);
    floor[i] = fit[i] >= vpp_ ? extra[i] + t.times->cheapest_sum_s[vpp_] : 1e300;
  }
  return r;
}

namespace {
// Group rows a PositionBound keeps (a few KB each at most): past it, it starts over.
constexpr size_t kMaxRows = 1 << 14;
}  // namespace

void PositionBound::reset(int pp, int num_layers, long long num_microbatches, int vpp, const std::vector<int>& blocks) {
  const std::vector<const GroupBoundTerms*>& terms = terms_;
  pp_ = pp;
  num_layers_ = num_layers;
  m_ = num_microbatches;
  vpp_ = vpp;
  blocks_ = blocks;
  const size_t n = terms.size();
  const int moe_layers = n > 0 ? static_cast<int>(terms[0]->lightest_moe_bytes.size()) - 1 : 0;
  num_moe_ = moe_layers > 0 && moe_layers < num_layers ? moe_layers : 0;
  // The rows of a group depend on its terms and the pipeline only: the sets that share a group
  // and a pipeline shape (most of a search's entries) share them.
  if (rows_count_ + n > kMaxRows) {
    rows_.clear();
    rows_count_ = 0;
  }
  fit_.resize(n);
  fit_moe_.resize(n);
  extra_.resize(n);
  floor_.resize(n);
  for (size_t g = 0; g < n; ++g) {
    const Rows& r = rows_.get(RowsKey{terms[g], pp, vpp, num_microbatches, num_moe_ > 0}, [&] {
      ++rows_count_;
      return make_rows(*terms[g]);
    });
    fit_[g] = r.ints.data();
    fit_moe_[g] = r.ints.data() + pp;
    extra_[g] = r.reals.data();
    floor_[g] = r.reals.data() + pp;
  }
  // Every order of the set uses all its groups: the layers' least times over them (by kind, when
  // the groups have kinds: the same sum).
  times_.clear();
  for (const GroupBoundTerms* t : terms) times_.push_back(t->times);
  layers_sum_c_ = cheapest_layers_sum_s(times_, num_layers);
}

bool PositionBound::prepare(const Options& options, double* sum_c, double* floor_c) const {
  *sum_c = layers_sum_c_;
  *floor_c = 0;
  for (int i = 0; i < pp_; ++i) {
    double least = 1e300, least_extra = 1e300;
    for (int g : options[i]) {
      least = std::min(least, floor_[g][i]);
      least_extra = std::min(least_extra, extra_[g][i]);
    }
    if (least >= 1e300) return false;  // no group fits vpp layers at this position
    *floor_c = std::max(*floor_c, least);
    *sum_c += least_extra;
  }
  *floor_c = std::max(*floor_c, *sum_c / pp_);
  return true;
}

namespace {
// Groups whose block orders holds() maximises over exactly (2^n subsets).
constexpr size_t kMaxFreeGroups = 10;
}  // namespace

bool PositionBound::holds(const Options& options, double c, int free_from) const {
  bool by_blocks = free_from >= 0 && free_from < pp_ && !blocks_.empty() && options[free_from].size() > 1 &&
                   options[free_from].size() <= kMaxFreeGroups;
  if (by_blocks) {  // the free groups' blocks must fill the free positions exactly
    int filled = 0;
    for (int g : options[free_from]) filled += blocks_[g];
    by_blocks = filled == pp_ - free_from;
  }
  const int end = by_blocks ? free_from : pp_;
  long long n = 0, n_moe = 0;
  // Layers (and MoE layers) group g's cheapest ones fit in time `left`: the same for every
  // position with the same end extras (all but the first and the last), so kept per group for
  // the last `left` asked (binary searches were half of this function).
  in_time_left_.assign(terms_.size(), std::numeric_limits<double>::quiet_NaN());  // NaN: none yet
  in_time_.resize(terms_.size());
  in_time_moe_.resize(terms_.size());
  auto in_time = [&](int g, double left) {
    if (!(in_time_left_[g] == left)) {
      in_time_left_[g] = left;
      in_time_[g] = layers_in_time(*terms_[g], left);
      if (num_moe_ > 0) in_time_moe_[g] = layers_in_time(terms_[g]->times->cheapest_moe_sum_s, left);
    }
  };
  if (by_blocks) {
    // most(g, i) summed over positions, per free group; then the best order of the blocks by a
    // DP over the subsets of groups placed (their blocks fill free_from.. in that order).
    const std::vector<int>& free = options[free_from];
    const size_t r = free.size();
    const int span = pp_ - free_from;
    most_sum_.assign(r * (span + 1), 0);
    if (num_moe_ > 0) most_moe_sum_.assign(r * (span + 1), 0);
    for (size_t k = 0; k < r; ++k) {
      const int g = free[k];
      for (int p = 0; p < span; ++p) {
        const int i = free_from + p;
        in_time(g, c - extra_[g][i]);
        most_sum_[k * (span + 1) + p + 1] = most_sum_[k * (span + 1) + p] + std::min(fit_[g][i], in_time_[g]);
        if (num_moe_ > 0) {
          most_moe_sum_[k * (span + 1) + p + 1] = most_moe_sum_[k * (span + 1) + p] + std::min(fit_moe_[g][i], in_time_moe_[g]);
        }
      }
    }
    // Every subset's blocks fit (they add up to span): best_[set] >= 0, so 0 starts the max.
    const size_t subsets = size_t{1} << r;
    const bool moe = num_moe_ > 0;
    best_.assign(subsets, 0);
    if (moe) best_moe_.assign(subsets, 0);
    start_.resize(subsets);
    start_[0] = 0;
    // Raw pointers and the blocks in a local array: this DP is most of the function.
    int* const starts = start_.data();
    long long* const best = best_.data();
    long long* const best_moe = moe ? best_moe_.data() : nullptr;
    const long long* const most = most_sum_.data();
    const long long* const most_moe = moe ? most_moe_sum_.data() : nullptr;
    int block[kMaxFreeGroups];
    for (size_t k = 0; k < r; ++k) block[k] = blocks_[free[k]];
    for (size_t set = 0; set < subsets; ++set) {
      if (set > 0) {  // positions the set's blocks fill (from free_from): its lowest group's block on top
        starts[set] = starts[set & (set - 1)] + block[__builtin_ctzll(set)];
      }
      const int start = starts[set];
      const long long here = best[set], here_moe = moe ? best_moe[set] : 0;
      for (size_t k = 0; k < r; ++k) {
        if (set >> k & 1) continue;
        const size_t next = set | size_t{1} << k;
        const size_t row = k * (span + 1);
        const int stop = start + block[k];
        best[next] = std::max(best[next], here + most[row + stop] - most[row + start]);
        if (moe) best_moe[next] = std::max(best_moe[next], here_moe + most_moe[row + stop] - most_moe[row + start]);
      }
    }
    n += best_[subsets - 1];
    if (num_moe_ > 0) n_moe += best_moe_[subsets - 1];
  }
  for (int i = 0; i < end; ++i) {
    int most = 0, most_moe = 0;
    for (int g : options[i]) {
      in_time(g, c - extra_[g][i]);
      most = std::max(most, std::min(fit_[g][i], in_time_[g]));
      if (num_moe_ > 0) most_moe = std::max(most_moe, std::min(fit_moe_[g][i], in_time_moe_[g]));
    }
    n += most;
    n_moe += most_moe;
  }
  return n >= num_layers_ && n_moe >= num_moe_;
}

double PositionBound::objective(double sum_c, double max_c) const {
  const double v = vpp_;
  return sum_c / v + (static_cast<double>(m_) - 1 / v) * max_c;
}

double PositionBound::lower_bound_s(const Options& options, int free_from) const {
  double sum_c = 0, lo = 0;
  if (!prepare(options, &sum_c, &lo)) return 1e300;
  double hi = lo;
  for (const GroupBoundTerms* t : terms_) hi = std::max(hi, t->first_extra_s + t->last_extra_s + t->times->cheapest_sum_s.back());
  hi *= 2;
  if (!holds(options, hi, free_from)) return 1e300;  // memory: the positions cannot hold every layer
  if (!holds(options, lo, free_from)) {
    for (int it = 0; it < 60 && hi - lo > 1e-9 * hi; ++it) {
      const double mid = 0.5 * (lo + hi);
      if (holds(options, mid, free_from)) hi = mid; else lo = mid;
    }
  }
  return objective(sum_c, lo);  // max_c >= lo: holds(lo) is false, or lo is the floor
}

void PositionBound::least_time_for_layers(const Options& options, int from, std::vector<double>* floor) const {
  // Position i can hold its n-th layer from time bp(i, n) on: the least, over its groups that
  // fit n layers in memory, of extras + the n cheapest layers. The positions hold r layers within
  // C only if r of the bp(i, n) are <= C, so floor[r] is the r-th smallest bp. Each position's
  // bp(i, n) is non-decreasing in n (larger sums over fewer groups): the smallest ones come from
  // merging the positions' runs (num_layers steps, instead of sorting every (i, n)).
  const int first = std::max(0, from);
  lengths_.assign(pp_ > first ? pp_ - first : 0, 0);
  for (int i = first; i < pp_; ++i) {
    int most = 0;
    for (int g : options[i]) most = std::max(most, fit_[g][i]);
    lengths_[i - first] = std::min(most, num_layers_);
  }
  auto bp = [&](int run, int n) {
    const int i = first + run;
    double least = 1e300;
    for (int g : options[i]) {
      if (fit_[g][i] >= n) least = std::min(least, extra_[g][i] + terms_[g]->times->cheapest_sum_s[n]);
    }
    return least;
  };
  const int found = smallest_of_sorted_runs(lengths_, bp, num_layers_, floor, &heads_);
  // A margin for the rounding of cost()'s own sums.
  for (int r = 1; r <= found; ++r) (*floor)[r] *= 1 - 1e-9;
}

long long PositionBound::layers_fit_from(const Options& options, int from) const {
  long long n = 0;
  for (int i = std::max(0, from); i < pp_; ++i) {
    int most = 0;
    for (int g : options[i]) most = std::max(most, fit_[g][i]);
    n += most;
  }
  return n;
}

bool PositionBound::reaches(const Options& options, double threshold_s, int free_from) const {
  if (threshold_s >= 1e300) return false;
  double sum_c = 0, floor_c = 0;
  if (!prepare(options, &sum_c, &floor_c)) return true;
  if (objective(sum_c, floor_c) >= threshold_s) return true;
  // The max_c at which the objective meets the threshold: the bound reaches it iff the positions
  // cannot hold every layer within that time (holds() is generous by a 1e-12 margin).
  const double v = vpp_;
  const double c_at = (threshold_s - sum_c / v) / (static_cast<double>(m_) - 1 / v);
  return !holds(options, c_at, free_from);
}

double static_memory_need_bytes(const Scenario& s, const Mesh& mesh, double dense_params, double expert_params) {
  return weight_memory(dense_params, expert_params, static_cast<long long>(mesh.dp) * mesh.cp, mesh.expert_dp(), true,
                       bound_weight_bytes(s.training, mesh))
      .total();
}

double static_memory_room_bytes(const Scenario& s, const std::vector<int>& groups, const std::vector<int>& stages_per_group) {
  double room = 0;
  for (int g : groups) {
    const GpuSpec& gpu = s.cluster.groups[g].gpu;
    room += stages_per_group[g] * (gpu.memory_gib - gpu.reserved_memory_gib) * kGiB;
  }
  return room;
}

}  // namespace hapmoe

namespace hapmoe {

PlanEvaluation evaluate_split_problem(const Scenario& s, const SplitProblem& p, const PlanSpec& plan) {
  std::vector<const StageCostModel*> models(s.cluster.groups.size(), nullptr);
  for (size_t i = 0; i < plan.stages.size(); ++i) models[plan.stages[i].group] = p.stage_models[i];
  return evaluate_with_models(s, plan, models);
}

std::vector<int> stage_groups_in_cluster_order(const std::vector<int>& groups, const std::vector<int>& stages_per_group) {
  std::vector<int> out;
  stage_groups_in_cluster_order(groups, stages_per_group, &out);
  return out;
}

void stage_groups_in_cluster_order(const std::vector<int>& groups, const std::vector<int>& stages_per_group,
                                   std::vector<int>* out) {
  out->clear();
  if (!std::is_sorted(groups.begin(), groups.end())) {  // a group set's groups are sorted already
    std::vector<int> sorted = groups;
    std::sort(sorted.begin(), sorted.end());
    stage_groups_in_cluster_order(sorted, stages_per_group, out);
    return;
  }
  for (int g : groups) out->insert(out->end(), stages_per_group[g], g);
}

std::vector<int> even_split(int num_layers, int stages) {
  std::vector<int> v;
  even_split(num_layers, stages, &v);
  return v;
}

void even_split(int num_layers, int stages, std::vector<int>* out) {
  out->assign(stages, num_layers / stages);
  for (int i = 0; i < num_layers % stages; ++i) (*out)[i] += 1;
}

}  // namespace hapmoe
