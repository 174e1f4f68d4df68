#include "hetero/hetero_dp.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <string>
#include <unordered_map>

#include "hapmoe/hetero_plan.hpp"
#include "hetero/hetero_evaluate.hpp"
#include "hetero/hetero_rules.hpp"
#include "hetero/hetero_split.hpp"
#include "evaluate/objective.hpp"
#include "spec/stable_map.hpp"

namespace hapmoe {

namespace {

bool shares_embedding(const Scenario& s) {
  return !s.model.untie_embeddings_and_output_weights || s.model.mtp_num_layers > 0;
}

// The capacity table's work limit (groups placed x stages x classes x 4 label steps per
// compute_capacity, which a run's bound calls about 20 times: at most about 5 M work units per
// run, a sixth of the budget; it also keeps the table within 2^20 cells): past it (many distinct
// groups) no capacity bound is used. 512 GPUs of 8 types, one group each, take 0.5 M steps; 12
// distinct groups of Mixtral-S took 6.7 M per call, and the run bounds spent the whole budget
// before any run was searched (no plan; 16 groups, 210 M per call: the CPU backstop ended it).
constexpr long long kMaxCapacitySteps = 1LL << 22;
// The least-time table's size limit (sets x layers^2 steps): past it (very deep models) the
// layers' least times bound the time of the layers left.
constexpr long long kMaxSigmaSteps = 1LL << 22;
// The capacity table's entry for a depth no block of a class can be placed at.
constexpr int kNoBlock = -(1 << 28);
// The work of testing a block in front of a state without pushing it (the front capacity's sum
// over its stages), in label steps.
constexpr long long kFrontTestSteps = 8;
// first_plan's split within the memory margin: at most this many times its best split.
constexpr double kWithinSpan = 1.5;
// A beam search keeps at most beam x kBeamNodes states per stage count.
constexpr int kBeamNodes = 16;
// The lower bound's steps above the least cap: kBoundSteps of kBoundStep each.
constexpr int kBoundSteps = 4;
constexpr double kBoundStep = 0.025;
// The lower bound's bisection from a hint: its first bracket, this share either side.
constexpr double kHintStep = 0.02;

}  // namespace

namespace {
// The most of the lightest layers (`moe`: of the MoE layers alone) a stage holds in memory with
// `in_flight` micro-batches (bytes grow with n). at_most: the answer with fewer micro-batches in
// flight (it only shrinks as they grow: a scan down from it, the rows' common case, instead of
// a binary search; -1 = unknown).
// extra: what the stage holds besides its layers and every stage's bytes (the last stage's
// output layer).
int layers_in_memory(const GroupBoundTerms& t, double in_flight, bool moe, int at_most = -1, double extra = 0) {
  const std::vector<double>& bytes = moe ? t.lightest_moe_bytes : t.lightest_bytes;
  const std::vector<double>& act = moe ? t.lightest_moe_act_bytes : t.lightest_act_bytes;
  auto fits = [&](int n) { return bytes[n] + in_flight * act[n] + t.every_stage_bytes + extra <= t.room_bytes * (1 + 1e-12); };
  if (at_most >= 0) {
    int n = at_most;
    while (n > 0 && !fits(n)) --n;
    return n;
  }
  int lo = 0, hi = static_cast<int>(bytes.size()) - 1;
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
// The most of the cheapest layers whose times fit in c.
int layers_in_time(const std::vector<double>& sum, double c) {
  if (c < 0) return 0;
  return static_cast<int>(std::upper_bound(sum.begin(), sum.end(), c * (1 + 1e-12)) - sum.begin()) - 1;
}
}  // namespace

struct HeteroDp::State {
  State(const Scenario& sc, StageModelCache& c, const HeteroRun& r, int k, SplitCounters* ctr, HeteroShared* sh)
      : s(sc),
        cache(c),
        run(r),
        distinct(std::max(1, k)),
        counters(ctr),
        rates(sc.cluster),
        tables(sh->tables),
        shared(sh),
        memos(&sh->memos),
        margin(sc.search.memory_margin_fraction) {}

  const Scenario& s;
  StageModelCache& cache;
  HeteroRun run;
  int distinct;
  SplitCounters* counters;
  BilledRates rates;
  int L = 0;
  long long m = 1;
  bool tied = false;
  int num_moe = 0;
  bool last_is_moe = false;  // the model's last layer
  std::vector<int> first_mbs;  // mesh 0's allowed micro-batch sizes

  // Classes of identical node groups (interchangeable: same GPUs, links and price).
  struct Class {
    std::vector<int> groups;
    std::string type;  // FlagScale device type
    double rate = 0;   // USD per hour when its group is used (all its GPUs)
  };
  std::vector<Class> classes;
  long long sets = 1;  // placed-count vectors: prod (groups + 1)

  // A group class's mesh: its stages' cost models per option, bounds per option.
  struct Block {
    int cls = 0;
    HeteroShape shape;
    int mbs = 1;
    std::vector<const StageCostModel*> models;  // per option
    std::vector<Mesh> meshes;                   // per option (pp set per stage)
    std::vector<const GroupLayerTimes*> times;  // per option
    const std::vector<double>* least_sum = nullptr;  // [n]: its n cheapest layers, each at its least option
    // Per option: the most of the lightest layers (all; MoE) one of its stages holds in memory at
    // each distance from the end (the search's shared rows: they do not depend on the cap).
    std::vector<const HeteroShared::CapRows*> caps;
    // Per option: the least pipeline link time of one of its stages away from the end of the
    // pipeline. With pp >= 2 each stage has a neighbour inside the block (its least inner link);
    // a single stage has one in another group behind it (the least link to another group; none
    // there: infinite).
    std::vector<double> link_s;
    // ... and as the last stage: the same inside the block; a single stage none (it may be the
    // whole pipeline).
    double last_link_s(size_t o) const { return shape.pp > 1 ? link_s[o] : 0.0; }
    long long stage_gpus() const { return static_cast<long long>(shape.tp) * shape.dp; }
  };
  std::vector<Block> blocks;
  std::vector<std::vector<int>> blocks_of;  // per class

  std::vector<double> least_prefix;  // [n]: the least time of layers [0, n), summed
  double least_first_extra = 0;
  std::vector<int> moe_prefix;       // [n]: MoE layers among [0, n)

  // Under the cap: per block and distance d = 1..L (stages from the end), the most layers (all;
  // MoE) one of its stages holds; per remaining-count vector and distance r, the most layers the
  // remaining classes hold in front of r stages.
  double cap = std::numeric_limits<double>::infinity();
  std::vector<std::vector<int>> stage_cap, stage_cap_moe;  // [block][d]
  std::vector<int> front, front_moe;                         // [set * (L + 2) + r]
  // Per set of classes left and layer count n: the least time those classes' blocks take for n
  // layers (each block its capacity at most, its cheapest layers).
  std::vector<double> sigma;                                 // [set * (L + 1) + n]
  bool capacity_on = false;
  std::vector<long long> strides;  // of the set index, per class

  // The DP's states.
  struct Key {
    long long placed;
    int block, behind, r, last;
    bool operator==(const Key& o) const {
      return placed == o.placed && block == o.block && behind == o.behind && r == o.r && last == o.last;
    }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      Fnv1a h;
      h.add(static_cast<uint64_t>(k.placed));
      h.add(static_cast<uint64_t>(k.block) << 32 | static_cast<uint32_t>(k.behind));
      h.add(static_cast<uint64_t>(k.r) << 32 | static_cast<uint32_t>(k.last));
      return static_cast<size_t>(h.value());
    }
  };
  struct Node {
    Key key;
    size_t placed_at;  // its groups placed per class: node_placed[placed_at ..][class]
    int table;
  };
  std::vector<Node> nodes;
  std::vector<int> node_placed;  // the nodes' placed counts, one run of classes.size() each
  std::vector<int> cur_placed;   // the node being expanded's
  std::unordered_map<Key, int, KeyHash> node_index;
  std::vector<std::vector<int>> by_r;  // node ids per r
  std::deque<SplitTable>& tables;  // shared->tables (a search's scratch; stable as it grows)
  size_t tables_used = 0;
  std::vector<std::pair<int, int>> prefixes;  // per prefix id: (parent, block); 0 = empty
  std::unordered_map<long long, int> prefix_ids;
  HeteroShared* shared = nullptr;
  StageCostMemos* memos = nullptr;  // shared->memos (one store for every run: models differ)
  std::vector<SplitLabel> finals;  // complete plans (labels over every layer)
  // search.memory_margin_fraction: labels know whether their stages are within it (0: all are).
  double margin = 0;
  long long closed = 0;
  long long expanded = 0;
  StageCostMemo own_memo;  // costs when `memos` has no room
  StageCostMemo::Item scratch_item;
  std::vector<std::pair<StageCostMemo*, bool>> push_memos;  // push()'s memo per option, once fetched

  // A set's index: a mixed-radix number over the classes (digit c: its groups placed, radix its
  // groups + 1). With at most 64 groups the radices' product is at most 2^64 (64 classes of one
  // group), past a long long: the index is computed modulo 2^64, where it is still one-to-one,
  // and read back unsigned (front_of). (Signed, 64 distinct groups overflowed: undefined, and
  // front_of read negative counts.)
  long long set_index(const std::vector<int>& counts) const {
    unsigned long long i = 0;
    for (size_t c = 0; c < classes.size(); ++c) i = i * (classes[c].groups.size() + 1) + static_cast<unsigned>(counts[c]);
    return static_cast<long long>(i);
  }
  double rate_of(const std::vector<int>& placed) const {
    double r = rates.fixed();
    for (size_t c = 0; c < classes.size(); ++c) r += placed[c] * classes[c].rate;
    return r;
  }
  int prefix_of(int parent, int block) {
    const long long key = static_cast<long long>(parent) * (static_cast<long long>(blocks.size()) + 1) + block;
    const auto [it, added] = prefix_ids.emplace(key, static_cast<int>(prefixes.size()));
    if (added) prefixes.push_back({parent, block});
    return it->second;
  }
  int new_table() {
    // Making one (its cells, their first labels' room) costs about 8 label steps per cell.
    counters->label_steps += 8LL * (L + 1);
    // Past the cell limit the table is still made (its caller is mid-push); the search stops at
    // its next calls.stopped().
    if (static_cast<long long>(tables_used + 1) * (L + 1) > shared->max_table_cells) shared->tables_full = true;
    if (tables_used == tables.size()) tables.emplace_back();
    SplitTable& t = tables[tables_used];
    if (static_cast<int>(t.size()) < L + 1) t.resize(static_cast<size_t>(L) + 1);
    for (auto& cell : t) cell.clear();
    return static_cast<int>(tables_used++);
  }

  void build(const std::vector<std::vector<HeteroShape>>& shapes);
  // times: also the least-time table (the bisection on the cap needs the capacities alone).
  void compute_capacity(double c, bool times = true);
  // Per block: whether another block of its class and pipeline depth holds at least as many
  // layers at every stage under every cap (its stages' caps are no larger: best[] never takes
  // it, and the bisection, times false, needs no stage caps of it); filled by build().
  std::vector<char> cap_dominated;
  void find_cap_dominated();
  std::vector<std::vector<std::vector<int>>> best, best_moe;  // compute_capacity's
  std::vector<int> cap_sum, cap_sum_moe, set_counts;                     // compute_capacity scratch
  std::vector<std::vector<double>> env;                                  // compute_capacity scratch
  std::vector<size_t> block_at;  // per block: its pipeline depth's index in pps[its class]
  std::vector<std::vector<int>> best_any, best_any_moe;                  // [class][r], non-increasing in r
  // Whether a stage of block b at distance d holds no layer under the cap (compute_capacity's),
  // so that b cannot be placed there: every stage holds a layer, the last one (d = 1) the
  // model's last layer besides the output layer. (Counted as a stage of no layers, a block whose
  // output layer alone exceeded the cap was placed last: on DeepSeek-V3 over 8 GPU types the
  // least cap was half the best plan's largest stage.)
  bool holds_none(int b, int d) const {
    if (stage_cap[static_cast<size_t>(b)][static_cast<size_t>(d)] == 0) return true;
    return d == 1 && num_moe > 0 && last_is_moe && stage_cap_moe[static_cast<size_t>(b)][1] == 0;
  }
  // The most layers the classes of `remaining` (a set index) hold in front of r stages.
  std::pair<int, int> front_of(long long remaining, int r) const {
    const int W = L + 2;
    if (capacity_on) return {front[static_cast<size_t>(remaining * W + r)], front_moe[static_cast<size_t>(remaining * W + r)]};
    // The set's counts, decoded once for the calls in a row on one set (a state's front tests
    // and pushes; with 64 distinct groups the divisions were 40% of the search's time).
    if (!decoded_any || remaining != decoded_set) {
      unsigned long long x = static_cast<unsigned long long>(remaining);
      decoded_counts.resize(classes.size());
      for (size_t cl = classes.size(); cl-- > 0;) {
        const unsigned long long base = classes[cl].groups.size() + 1;
        decoded_counts[cl] = static_cast<int>(x % base);
        x /= base;
      }
      decoded_set = remaining;
      decoded_any = true;
    }
    int n = 0, n_moe = 0;
    for (size_t cl = 0; cl < classes.size(); ++cl) {
      n += decoded_counts[cl] * best_any[cl][r];
      n_moe += decoded_counts[cl] * best_any_moe[cl][r];
    }
    return {std::min(n, L), std::min(n_moe, L)};
  }
  // front_of's last set decoded (without the capacity table; any value is a set index: 64
  // classes of one group, all left, are 2^64 - 1, i.e. -1)
  mutable bool decoded_any = false;
  mutable long long decoded_set = 0;
  mutable std::vector<int> decoded_counts;
  std::vector<std::vector<int>> pps;
  double feasible_cap = 0;  // lower_bound's least cap found to hold every layer
  bool first_plan(const Calls& calls);
  // An assignment of first_plan's: its plan without the split, the split problem, its groups
  // per class, and its proportional split (capacity_split) when that fits.
  struct Candidate {
    HeteroDpPlan plan;
    HeteroSplitProblem prob;
    std::optional<HeteroSplit> split;
    std::vector<int> taken;
  };
  std::optional<Candidate> first_assignment(int want, int tp, bool fastest);
  double lower_bound(double hint);
  void search(const Calls& calls, double below_s, int beam);

  // Links of a block's stages: between its local stages k and k + 1 (front to back), and where
  // block a (front) meets block b.
  Link inner_link(const Block& b, int k) const {
    const NodeGroup& g = s.cluster.groups[classes[b.cls].groups[0]];
    return hetero_group_link(g, k * b.stage_gpus(), (k + 2) * b.stage_gpus() - 1);
  }
  StageLinks boundary(const Block& a, const Block& b) const {
    // Twins are different groups of one class: the link between two of its groups.
    const int ga = classes[a.cls].groups[0];
    const int gb = a.cls == b.cls ? classes[b.cls].groups[1] : classes[b.cls].groups[0];
    return hetero_mesh_boundary(s.cluster, ga, HeteroMeshShape{a.shape.tp, 1, a.shape.dp}, gb,
                                HeteroMeshShape{b.shape.tp, 1, b.shape.dp});
  }
};

void HeteroDp::State::build(const std::vector<std::vector<HeteroShape>>& shapes) {
  L = s.model.num_layers;
  m = s.training.global_batch_size / run.tokens;
  tied = shares_embedding(s);
  first_mbs = search_values_or(s.search.micro_batch_size, {1, 2});
  const auto& groups = s.cluster.groups;
  std::vector<int> class_of(groups.size(), -1);
  for (size_t g = 0; g < groups.size(); ++g) {
    if (class_of[g] >= 0) continue;
    class_of[g] = static_cast<int>(classes.size());
    Class c;
    c.groups.push_back(static_cast<int>(g));
    c.type = device_type_of(groups[g].gpu);
    c.rate = rates.used(static_cast<int>(g), groups[g].gpus());
    for (size_t h = g + 1; h < groups.size(); ++h) {
      if (class_of[h] < 0 && groups[h] == groups[g]) {
        class_of[h] = class_of[g];
        c.groups.push_back(static_cast<int>(h));
      }
    }
    classes.push_back(std::move(c));
  }
  for (const Class& c : classes) {
    sets *= static_cast<long long>(c.groups.size()) + 1;
    if (sets > (1LL << 40)) sets = 1LL << 40;
  }
  strides.assign(classes.size(), 1);
  // (read while the capacity table is on, with few sets; modulo 2^64 as set_index)
  for (size_t cl = classes.size(); cl-- > 1;) {
    strides[cl - 1] = static_cast<long long>(static_cast<unsigned long long>(strides[cl]) * (classes[cl].groups.size() + 1));
  }
  blocks_of.assign(classes.size(), {});
  std::vector<double> least(static_cast<size_t>(L), std::numeric_limits<double>::max());
  least_first_extra = std::numeric_limits<double>::max();
  for (size_t c = 0; c < classes.size(); ++c) {
    const int g = classes[c].groups[0];
    for (const HeteroShape& h : shapes[g]) {
      if (run.tokens % h.dp != 0 || h.pp > L) continue;
      Block b;
      b.cls = static_cast<int>(c);
      b.shape = h;
      b.mbs = run.tokens / h.dp;
      // The mesh alone as a plan (its rules do not depend on the meshes around it but for the
      // pipeline ones the DP applies: device types, tied first and last stage, mesh 0's
      // micro-batch), checked as the entry search checks an entry: recompute none.
      const int shape_at = static_cast<int>(&h - shapes[g].data());
      const HeteroShared::CheckedMesh& checked = shared->meshes.get({g, shape_at, b.mbs, run.offload}, [&] {
        std::vector<int> layers(static_cast<size_t>(h.pp), 1);
        layers.back() = L - h.pp + 1;
        const PlanSpec p = hetero_plan_of(s, {g}, {h}, b.mbs, layers,
                                          std::vector<Recompute>(static_cast<size_t>(h.pp), Recompute::kNone), run.offload);
        HeteroShared::CheckedMesh c;
        c.ok = !check_hetero_plan_rules(s, p);
        c.mesh = hetero_stage_mesh(p, 0);
        return c;
      });
      if (!checked.ok) continue;
      for (Recompute r : run.recompute) {
        Mesh mesh = checked.mesh;
        mesh.recompute = r;
        const StageCostModel* model = cache.get(mesh, g);
        const GroupLayerTimes& t = shared->layer_times.get(model, [&] { return group_layer_times(*model, L); });
        b.models.push_back(model);
        b.meshes.push_back(mesh);
        b.times.push_back(&t);
        const HeteroShared::CapRows& rows = shared->cap_rows.get({model, mesh.dp, run.offload, m}, [&] {
          // The bound terms' lightest layers at each distance from the end.
          const GroupBoundTerms terms = group_bound_terms(s, *model, t, mesh);
          HeteroShared::CapRows c;
          c.all.assign(static_cast<size_t>(L) + 2, 0);  // d = 0: unused
          c.moe.assign(static_cast<size_t>(L) + 2, 0);
          // The last stage (d = 1) also holds the output layer (and the MTP layers) and, in a
          // pipeline, the embedding's copy (a single stage holds the embedding instead: the
          // lesser of the two). Past it, fewer layers fit as the micro-batches in flight grow.
          const double last_extra = terms.last_extra_bytes + terms.last_extra_act_bytes +
                                    std::min(terms.embedding_copy_bytes, terms.first_extra_bytes);
          for (bool moe : {false, true}) {
            std::vector<int>& row = moe ? c.moe : c.all;
            for (int d = 1; d <= L + 1; ++d) {
              const double in_flight = static_cast<double>(std::min<long long>(d, m));
              row[static_cast<size_t>(d)] =
                  layers_in_memory(terms, in_flight, moe, d > 2 ? row[static_cast<size_t>(d) - 1] : -1, d == 1 ? last_extra : 0);
            }
          }
          return c;
        });
        b.caps.push_back(&rows);
        double link = std::numeric_limits<double>::infinity();
        for (int k = 0; k + 1 < h.pp; ++k) link = std::min(link, model->link_s(inner_link(b, k)));
        if (h.pp == 1) {  // (a boundary's reshard pieces only add latency)
          for (int other = 0; other < static_cast<int>(groups.size()); ++other) {
            if (other != g) link = std::min(link, model->link_s(inter_group_link(s.cluster, g, other)));
          }
        }
        b.link_s.push_back(link);
        for (int l = 0; l < L; ++l) least[l] = std::min(least[l], t.layer_s[l]);
        least_first_extra = std::min(least_first_extra, model->first_extra_s());
      }
      b.least_sum = &shared->least_sums.get(b.models, [&] {
        std::vector<double> per_layer(static_cast<size_t>(L), std::numeric_limits<double>::max());
        for (const GroupLayerTimes* t : b.times) {
          for (int l = 0; l < L; ++l) per_layer[l] = std::min(per_layer[l], t->layer_s[l]);
        }
        std::sort(per_layer.begin(), per_layer.end());
        std::vector<double> sum(static_cast<size_t>(L) + 1, 0.0);
        for (int l = 0; l < L; ++l) sum[l + 1] = sum[l] + per_layer[l];
        return sum;
      });
      blocks_of[c].push_back(static_cast<int>(blocks.size()));
      blocks.push_back(std::move(b));
    }
  }
  least_prefix.assign(static_cast<size_t>(L) + 1, 0.0);
  moe_prefix.assign(static_cast<size_t>(L) + 1, 0);
  if (blocks.empty()) return;
  for (int l = 0; l < L; ++l) {
    least_prefix[l + 1] = least_prefix[l] + least[l];
    moe_prefix[l + 1] = moe_prefix[l] + (blocks.front().models.front()->layer(l).expert_params > 0 ? 1 : 0);
  }
  num_moe = moe_prefix[L];
  last_is_moe = moe_prefix[L] > moe_prefix[L - 1];
  if (num_moe == L) num_moe = 0;  // all layers MoE: the all-layers bound is the MoE one
  find_cap_dominated();
}


void HeteroDp::State::compute_capacity(double c, bool times) {
  cap = c;
  // Its work, in label steps: the stage capacities, then per set the front and, when small
  // enough, the least-time table (a convolution per set: L^2).
  const long long front_steps = sets * (L + 2) * static_cast<long long>(classes.size()) * 4;
  capacity_on = front_steps <= kMaxCapacitySteps;
  long long steps = 0;
  for (const Block& b : blocks) steps += static_cast<long long>(b.models.size()) * (L + 2);
  const bool with_sigma = times && capacity_on && sets * static_cast<long long>(L + 1) * (L + 1) <= kMaxSigmaSteps;
  if (capacity_on) steps += front_steps;
  if (with_sigma) steps += sets * static_cast<long long>(L + 1) * (L + 1) / 8;  // a min and an add each
  counters->label_steps += steps;
  stage_cap.resize(blocks.size());
  stage_cap_moe.resize(blocks.size());
  for (size_t b = 0; b < blocks.size(); ++b) {
    if (!times && cap_dominated[b]) continue;  // its stage caps are left stale: the bisection reads front alone
    const Block& blk = blocks[b];
    // Every entry is written below: the first option's caps, the others' maxed in.
    stage_cap[b].resize(static_cast<size_t>(L) + 2);
    stage_cap[b][0] = 0;
    if (blk.models.empty()) std::fill(stage_cap[b].begin(), stage_cap[b].end(), 0);
    if (num_moe > 0) stage_cap_moe[b].assign(static_cast<size_t>(L) + 2, 0);  // (else never read)
    for (size_t o = 0; o < blk.models.size(); ++o) {
      // Each stage's time holds its least link's, the last stage's (d = 1) the output layer's too:
      // the layers that fit in the rest of the cap, at the last stage a scan down from those that
      // fit away from the end (a few steps, not a second binary search: this loop is most of the
      // table's time). within < 0: no stage away from the end (a single stage, its group alone).
      const double within = blk.link_s[o] < std::numeric_limits<double>::infinity() ? c - blk.link_s[o] : -1.0;
      const double last_within = c - blk.last_link_s(o) - blk.models[o]->last_extra_s();
      auto in_time_last_of = [&](const std::vector<double>& sum, int in_time) {
        if (last_within < 0) return 0;
        // (a single stage's least link is to another group: none as the whole pipeline)
        if (last_within > within) return layers_in_time(sum, last_within);
        int n = in_time;
        while (n > 0 && sum[static_cast<size_t>(n)] > last_within * (1 + 1e-12)) --n;
        return n;
      };
      const int in_time = layers_in_time(blk.times[o]->cheapest_sum_s, within);
      const int in_time_last = in_time_last_of(blk.times[o]->cheapest_sum_s, in_time);
      const int* mem = blk.caps[o]->all.data();
      int* const cap_b = stage_cap[b].data();
      if (o == 0) {
        for (int d = 1; d <= L + 1; ++d) cap_b[d] = std::min(in_time, mem[d]);
        cap_b[1] = std::min(in_time_last, mem[1]);
      } else {
        for (int d = 2; d <= L + 1; ++d) cap_b[d] = std::max(cap_b[d], std::min(in_time, mem[d]));
        cap_b[1] = std::max(cap_b[1], std::min(in_time_last, mem[1]));
      }
      if (num_moe > 0) {
        const int in_time_moe = layers_in_time(blk.times[o]->cheapest_moe_sum_s, within);
        const int in_time_moe_last = in_time_last_of(blk.times[o]->cheapest_moe_sum_s, in_time_moe);
        const int* mem_moe = blk.caps[o]->moe.data();
        int* const cap_moe_b = stage_cap_moe[b].data();
        for (int d = 2; d <= L + 1; ++d) cap_moe_b[d] = std::max(cap_moe_b[d], std::min(in_time_moe, mem_moe[d]));
        cap_moe_b[1] = std::max(cap_moe_b[1], std::min(in_time_moe_last, mem_moe[1]));
      }
    }
  }
  // best[c][pp][r]: the most layers a block of class c with pp stages holds in front of r stages
  // (MoE layers: best_moe).
  const int W = L + 2;
  if (pps.size() != classes.size()) {  // the blocks' pipeline depths per class, once
    pps.assign(classes.size(), {});
    block_at.assign(blocks.size(), 0);
    best.assign(classes.size(), {});
    best_moe.assign(classes.size(), {});
    for (size_t cl = 0; cl < classes.size(); ++cl) {
      for (int b : blocks_of[cl]) {
        const int pp = blocks[b].shape.pp;
        size_t at = std::find(pps[cl].begin(), pps[cl].end(), pp) - pps[cl].begin();
        if (at == pps[cl].size()) {
          pps[cl].push_back(pp);
          best[cl].emplace_back(W);
          best_moe[cl].emplace_back(W);
        }
        block_at[static_cast<size_t>(b)] = at;
      }
    }
    best_any.assign(classes.size(), std::vector<int>(W));
    best_any_moe.assign(classes.size(), std::vector<int>(W));
  }
  // A depth no block of the class can be placed at (a stage of it holds no layer) holds kNoBlock:
  // the front table's sums through it stay negative, below every placement.
  for (size_t cl = 0; cl < classes.size(); ++cl) {
    for (size_t at = 0; at < pps[cl].size(); ++at) {
      std::fill(best[cl][at].begin(), best[cl][at].end(), kNoBlock);
      if (num_moe > 0) std::fill(best_moe[cl][at].begin(), best_moe[cl][at].end(), kNoBlock);
    }
  }
  std::vector<int>& sum = cap_sum;  // prefix sums of a block's stage capacities by distance
  std::vector<int>& sum_moe = cap_sum_moe;
  sum.resize(static_cast<size_t>(W));
  sum_moe.resize(static_cast<size_t>(W));
  for (size_t cl = 0; cl < classes.size(); ++cl) {
    for (int b : blocks_of[cl]) {
      if (cap_dominated[static_cast<size_t>(b)]) continue;  // best[] never takes it
      const int pp = blocks[b].shape.pp;
      const size_t at = block_at[static_cast<size_t>(b)];
      const int* const caps = stage_cap[b].data();
      sum[0] = 0;
      for (int d = 1; d <= L + 1; ++d) sum[d] = sum[d - 1] + caps[d];
      // Its stages' caps do not grow with the distance past the last stage (more micro-batches
      // in flight): it goes at r >= 1 while its front stage holds a layer, r < rows (a binary
      // search for the first empty distance), and at r = 0 when its last stage holds one too.
      int lo = 1, hi = L + 2;  // the first empty distance past 1 is in (lo, hi]; L + 2: none
      while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (caps[mid] == 0) hi = mid; else lo = mid;
      }
      const int rows = std::min(L - pp + 1, hi - pp);  // r + pp < hi
      const int first_row = holds_none(b, 1) ? 1 : 0;
      int* const most = best[cl][at].data();
      const int* const sm = sum.data();
      for (int r = first_row; r < rows; ++r) most[r] = std::max(most[r], sm[r + pp] - sm[r]);
      if (num_moe == 0) continue;  // the MoE bound is the all-layers one (build())
      sum_moe[0] = 0;
      for (int d = 1; d <= L + 1; ++d) sum_moe[d] = sum_moe[d - 1] + stage_cap_moe[b][d];
      int* const most_moe = best_moe[cl][at].data();
      const int* const sm_moe = sum_moe.data();
      for (int r = first_row; r < rows; ++r) most_moe[r] = std::max(most_moe[r], sm_moe[r + pp] - sm_moe[r]);
    }
  }
  // Per class and r: the most any of its blocks holds in front of r stages (for many classes,
  // where the per-set table is too large, a looser bound sums these over the classes left; the
  // bisection reads the per-set table alone).
  for (size_t cl = 0; cl < classes.size() && (times || !capacity_on); ++cl) {
    for (auto [any, per_pp] : {std::pair{&best_any[cl], &best[cl]}, std::pair{&best_any_moe[cl], &best_moe[cl]}}) {
      std::fill(any->begin(), any->end(), 0);
      if (any == &best_any_moe[cl] && num_moe == 0) continue;  // stays 0, never read
      for (const std::vector<int>& most : *per_pp) {
        for (int r = 0; r < W; ++r) (*any)[r] = std::max((*any)[r], most[r]);
      }
      for (int r = W - 2; r >= 0; --r) (*any)[r] = std::max((*any)[r], (*any)[r + 1]);  // a class further from the end holds no more
    }
  }
  if (!capacity_on) return;
  front.assign(static_cast<size_t>(sets * W), 0);
  front_moe.assign(static_cast<size_t>(sets * W), 0);
  // env[cl][n]: the least time n layers take on one block of class cl (its capacity at the end
  // of the pipeline, the most it holds anywhere).
  const int V = L + 1;
  constexpr double kNone = std::numeric_limits<double>::infinity();
  env.resize(classes.size());
  for (size_t cl = 0; cl < classes.size() && with_sigma; ++cl) {
    env[cl].assign(static_cast<size_t>(V), kNone);
    env[cl][0] = 0;
    for (int b : blocks_of[cl]) {
      // The most it holds anywhere: at the end, or one stage further (the last stage holds the
      // output layer too; further on, no more than there).
      int most = 0, most_after = 0;
      for (int d = 1; d <= blocks[b].shape.pp && d <= L; ++d) {
        most += stage_cap[b][d];
        most_after += stage_cap[b][d + 1];
      }
      most = std::max(most, most_after);
      for (int n = 1; n <= std::min(most, L); ++n) env[cl][n] = std::min(env[cl][n], (*blocks[b].least_sum)[n]);
    }
  }
  sigma.assign(with_sigma ? static_cast<size_t>(sets * V) : 0, kNone);
  // By set index ascending: a set's subsets (one group fewer) have smaller indices.
  std::vector<int>& counts = set_counts;
  counts.assign(classes.size(), 0);
  for (long long u = 0; u < sets; ++u) {
    long long x = u;
    for (size_t cl = classes.size(); cl-- > 0;) {
      const long long base = static_cast<long long>(classes[cl].groups.size()) + 1;
      counts[cl] = static_cast<int>(x % base);
      x /= base;
    }
    double* sg = with_sigma ? &sigma[static_cast<size_t>(u * V)] : nullptr;
    if (!sg) {
    } else if (u == 0) {
      sg[0] = 0;
    } else {
      size_t cl = 0;  // a class of u: u is that class's block added to the set one group smaller
      while (counts[cl] == 0) ++cl;
      const double* prev = &sigma[static_cast<size_t>((u - strides[cl]) * V)];
      for (int a = 0; a < V; ++a) {
        if (prev[a] == kNone) continue;
        for (int n = 0; a + n < V; ++n) {
          if (env[cl][n] == kNone) break;
          sg[a + n] = std::min(sg[a + n], prev[a] + env[cl][n]);
        }
      }
    }
    // front[u][r]: the most over a class cl of u and a depth pp of its blocks of what one holds
    // in front of r stages plus what the set without it holds in front of r + pp (rows 0 from
    // assign; a row at a time: a loop over r the compiler vectorizes).
    int* const most = &front[static_cast<size_t>(u * W)];
    int* const most_moe = &front_moe[static_cast<size_t>(u * W)];
    for (size_t cl = 0; cl < classes.size(); ++cl) {
      if (counts[cl] == 0) continue;
      const long long sub = u - strides[cl];
      for (size_t at = 0; at < pps[cl].size(); ++at) {
        const int pp = pps[cl][at];
        const int* const held = best[cl][at].data();
        const int* const ahead = &front[static_cast<size_t>(sub * W + pp)];
        const int rows = L - pp + 1;  // r = 0 .. L - pp (a local: the stores below may not alias it)
        for (int r = 0; r < rows; ++r) most[r] = std::max(most[r], held[r] + ahead[r]);
        if (num_moe == 0) continue;
        const int* const held_moe = best_moe[cl][at].data();
        const int* const ahead_moe = &front_moe[static_cast<size_t>(sub * W + pp)];
        for (int r = 0; r < rows; ++r) most_moe[r] = std::max(most_moe[r], held_moe[r] + ahead_moe[r]);
      }
    }
  }
}

void HeteroDp::State::find_cap_dominated() {
  cap_dominated.assign(blocks.size(), 0);
  // Option o' of block a covers option o of block b: its cheapest layers take no longer (so at
  // any cap as many fit in time) and it holds no fewer in memory at every distance.
  auto covers = [&](const Block& a, size_t oa, const Block& b, size_t ob) {
    auto no_more = [](const std::vector<double>& x, const std::vector<double>& y) {
      return std::equal(x.begin(), x.end(), y.begin(), y.end(), std::less_equal<double>());
    };
    auto no_fewer = [](const std::vector<int>& x, const std::vector<int>& y) {
      return std::equal(x.begin(), x.end(), y.begin(), y.end(), std::greater_equal<int>());
    };
    const std::vector<double>& ta = a.times[oa]->cheapest_sum_s;
    const std::vector<double>& tb = b.times[ob]->cheapest_sum_s;
    const std::vector<int>& ma = a.caps[oa]->all;
    const std::vector<int>& mb = b.caps[ob]->all;
    // Most pairs fail at an end (all layers' time, the memory nearest the end): checked first.
    if (ta.size() != tb.size() || ma.size() != mb.size() || ta.back() > tb.back() || ma[1] < mb[1] || ma.back() < mb.back() ||
        a.models[oa]->last_extra_s() > b.models[ob]->last_extra_s() || a.link_s[oa] > b.link_s[ob]) {
      return false;
    }
    if (!no_more(ta, tb) || !no_fewer(ma, mb)) return false;
    return num_moe == 0 || (no_more(a.times[oa]->cheapest_moe_sum_s, b.times[ob]->cheapest_moe_sum_s) &&
                            no_fewer(a.caps[oa]->moe, b.caps[ob]->moe));
  };
  std::vector<std::vector<int>> kept_by_pp(static_cast<size_t>(L) + 1);  // of one class
  for (const std::vector<int>& of_class : blocks_of) {
    for (std::vector<int>& k : kept_by_pp) k.clear();
    for (int b : of_class) {
      const Block& blk = blocks[static_cast<size_t>(b)];
      std::vector<int>& kept = kept_by_pp[static_cast<size_t>(blk.shape.pp)];
      bool dominated = false;
      for (size_t k = 0; k < kept.size() && !dominated && !blk.models.empty(); ++k) {
        const Block& a = blocks[static_cast<size_t>(kept[k])];
        dominated = true;
        for (size_t ob = 0; ob < blk.models.size() && dominated; ++ob) {
          bool covered = false;
          for (size_t oa = 0; oa < a.models.size() && !covered; ++oa) covered = covers(a, oa, blk, ob);
          dominated = covered;
        }
      }
      cap_dominated[static_cast<size_t>(b)] = dominated ? 1 : 0;
      if (!dominated) kept.push_back(b);
    }
  }
}

double HeteroDp::State::lower_bound(double hint) {
  if (blocks.empty()) return 1e300;
  const long long all = sets - 1;  // every class at its count (the last index)
  const int V = L + 1;
  auto holds = [&](double c) {
    compute_capacity(c, false);
    const auto [n, n_moe] = front_of(all, 0);
    return n >= L && (num_moe == 0 || n_moe >= num_moe);
  };
  double hi = 0;
  for (const Block& b : blocks) {
    for (size_t o = 0; o < b.times.size(); ++o) {
      // (a cap at which each stage, anywhere, holds what it holds at no cap; the last stage's
      // link is no longer than the others')
      const double link = b.link_s[o] < std::numeric_limits<double>::infinity() ? b.link_s[o] : 0.0;
      hi = std::max(hi, b.times[o]->cheapest_sum_s[L] + b.models[o]->last_extra_s() + link);
    }
  }
  if (!holds(hi * 1.0001)) return 1e300;
  feasible_cap = hi * 1.0001;
  // The least cap at which the classes hold every layer (a bisection, the feasible end kept),
  // from a bracket around the hint when there is one: steps of kHintStep x 2^k from it, down
  // while the classes hold every layer, up while they do not.
  double lo = 0;
  if (hint > 0 && hint < hi) {
    if (holds(hint)) {
      hi = hint;
      for (double step = kHintStep; step < 1; step *= 2) {
        const double a = hint * (1 - step);
        if (!holds(a)) {
          lo = a;
          break;
        }
        hi = a;
      }
    } else {
      lo = hint;
      for (double step = kHintStep; hint * (1 + step) < hi; step *= 2) {
        const double b = hint * (1 + step);
        if (holds(b)) {
          hi = b;
          break;
        }
        lo = b;
      }
    }
  }
  for (int it = 0; it < 14 && hi - lo > 1e-3 * hi; ++it) {
    const double mid = (lo + hi) / 2;
    if (holds(mid)) hi = mid; else lo = mid;
  }
  feasible_cap = hi;
  if (!capacity_on) return least_prefix[L] + static_cast<double>(m - 1) * lo;
  // T >= sigma_C(L) + (m - 1) C at the plan's largest stage time C >= lo, where sigma_C, the least
  // time of the layers on blocks within cap C, does not grow with C: on [C_k, C_k+1],
  // T >= sigma_{C_k+1}(L) + (m - 1) C_k; past the last step, sigma at no cap.
  const double coef = static_cast<double>(m - 1);
  double best = 1e300, c_k = lo;
  for (int k = 1; k <= kBoundSteps; ++k) {
    const double c_next = lo * (1 + kBoundStep * k);
    compute_capacity(c_next);
    if (sigma.empty()) break;
    best = std::min(best, sigma[static_cast<size_t>(all * V + L)] + coef * c_k);
    c_k = c_next;
  }
  compute_capacity(std::numeric_limits<double>::infinity());
  if (sigma.empty()) return least_prefix[L] + coef * lo;
  return std::min(best, std::max(least_prefix[L], sigma[static_cast<size_t>(all * V + L)]) + coef * c_k);
}

void HeteroDp::State::search(const Calls& calls, double below_s, int beam) {
  if (blocks.empty()) return;
  SplitCounters* k = counters;
  const LabelDominance dominates{1.0, static_cast<double>(m - 1)};
  double least_rate = 1e300;
  for (const Class& c : classes) least_rate = std::min(least_rate, rates.fixed() + c.rate);
  const double limit = std::min(below_s, calls.within_threshold_s(least_rate));
  if (limit >= 1e300) compute_capacity(std::numeric_limits<double>::infinity());
  else compute_capacity((limit - least_prefix[L]) / static_cast<double>(m - 1));
  nodes.clear();
  node_placed.clear();
  node_index.clear();
  by_r.assign(static_cast<size_t>(L) + 2, {});
  tables_used = 0;
  prefixes.assign(1, {-1, -1});
  prefix_ids.clear();
  finals.clear();
  closed = 0;
  const std::vector<int> total = [&] {
    std::vector<int> t(classes.size());
    for (size_t c = 0; c < classes.size(); ++c) t[c] = static_cast<int>(classes[c].groups.size());
    return t;
  }();

  // A stage's cost: block b, option o, d stages from the end (first: the pipeline's first
  // stage), over the n layers before the last j, read from the option's memo row j (memos per
  // (d, first, model, links, the mesh's dp and offload), looked up once per push; nullptr: no
  // room, costed each time).
  auto stage_cost = [&](const Block& b, int o, int d, bool first, const StageLinks& links, StageCostMemo* memo,
                        StageCostMemo::Item* row, int j, int n) -> const StageCostMemo::Item& {
    StageCostMemo::Item& item = row ? row[n] : scratch_item;
    if (!row || !memo->known(item)) {
      Mesh mesh = b.meshes[o];
      mesh.pp = first ? d : d + 1;  // stage 0 of d (first) or stage 1 of d + 1: d from the end
      const StageCost c = b.models[o]->cost(first ? 0 : 1, L - j - n, n, links, mesh);
      ++k->stage_costs;
      (memo ? *memo : own_memo).set(&item, c, margin);
      if (!item.usable) note_stage_shortfall(k, c);
    }
    return item;
  };
  // Whether the stages in front of a label can hold the layers before it: the rest of block bb
  // from distance d + 1 to its front stage at distance front_d, then the classes of `remaining`.
  // The most layers (all; MoE) the stages in front of a stage can hold: the rest of block bb from
  // distance d + 1 to its front stage at distance front_d, then the classes of `remaining`.
  auto front_capacity = [&](int bb, int d, int front_d, long long remaining) {
    std::pair<int, int> n = front_of(remaining, front_d);
    for (int x = d + 1; x <= front_d; ++x) n.first += stage_cap[bb][x];
    if (num_moe > 0) {
      for (int x = d + 1; x <= front_d; ++x) n.second += stage_cap_moe[bb][x];
    }
    return n;
  };
  auto front_holds = [&](int layers_left, const std::pair<int, int>& capacity) {
    if (layers_left <= 0) return layers_left == 0;
    return capacity.first >= layers_left && (num_moe == 0 || capacity.second >= moe_prefix[layers_left]);
  };
  // A lower bound on the time of the layers in front of a label: held by block bb's stages (at
  // most a block of its class) and the classes of `remaining`.
  auto rest_time = [&](int layers_left, int bb, long long remaining) {
    if (layers_left <= 0) return 0.0;
    if (!capacity_on || sigma.empty()) return least_prefix[layers_left] + least_first_extra;
    const long long with = remaining + strides[blocks[bb].cls];
    return std::max(least_prefix[layers_left], sigma[static_cast<size_t>(with * (L + 1) + layers_left)]) + least_first_extra;
  };
  // Pushes a stage of block b at distance d (first: the pipeline's first stage, holding every
  // layer left) in front of the labels of `from` into `to`; the stages in front of it are block
  // bb's up to its front at front_d, then `remaining`'s; the plan bills `rate`.
  auto push = [&](const SplitTable& from, int from_id, SplitTable& to, int b, int d, bool first,
                  const StageLinks& links, int bb, int front_d, long long remaining, double rate) {
    bool added = false;
    const Block& blk = blocks[b];
    // A label above the memory margin must beat the k-th plan; one within it, the k-th within it.
    const double threshold = std::min(below_s, calls.threshold_s(rate));
    const double within_threshold = std::min(below_s, calls.within_threshold_s(rate));
    const std::pair<int, int> capacity = first ? std::pair<int, int>{0, 0} : front_capacity(bb, d, front_d, remaining);
    // The memos are kept across pushes, runs and searches (a memo's key holds all its costs
    // depend on: the mesh's dp and offload too), and forgotten when this push's might not fit.
    memos->keep_or_reset(L, blk.models.size());
    push_memos.assign(blk.models.size(), {nullptr, false});  // fetched when a label first needs it
    for (int j = 0; j < L; ++j) {
      const std::vector<SplitLabel>& here = from[j];
      if (here.empty()) continue;
      if (k->work() >= k->max_work) {
        k->stopped = true;
        return false;
      }
      const int max_n = L - j;
      for (int o = 0; o < static_cast<int>(blk.models.size()); ++o) {
        auto& [memo, fetched] = push_memos[static_cast<size_t>(o)];
        if (!fetched) {
          const Mesh& mesh = blk.meshes[static_cast<size_t>(o)];
          memo = memos->get(2 * d + (first ? 1 : 0), blk.models[o], links, mesh.dp, mesh.optimizer_offload_fraction);
          fetched = true;
        }
        StageCostMemo::Item* const row = memo ? memo->row(j, max_n) : nullptr;
        for (int n = first ? max_n : 1; n <= max_n; ++n) {
          const int j2 = j + n;
          const StageCostMemo::Item& c = stage_cost(blk, o, d, first, links, memo, row, j, n);
          if (!c.usable) {  // memory only grows with n
            k->memory += max_n - n + 1;
            break;
          }
          if (c.a > cap * (1 + 1e-12)) {  // and the time
            k->lower_bound += max_n - n + 1;
            break;
          }
          if (!first && !front_holds(L - j2, capacity)) {
            ++k->lower_bound;
            continue;
          }
          const double rest = first ? 0.0 : rest_time(L - j2, bb, remaining);
          for (int li = 0; li < static_cast<int>(here.size()); ++li) {
            const SplitLabel& lab = here[li];
            ++k->label_steps;
            SplitLabel next{lab.sum_c + c.a, std::max(lab.max_c, c.a), std::max(lab.max_tail, c.b), j, li, from_id,
                            lab.prefix, o, lab.within && c.within};
            if (next.sum_c + rest + static_cast<double>(m - 1) * next.max_c + next.max_tail >=
                (next.within ? within_threshold : threshold)) {
              ++k->lower_bound;
              continue;
            }
            added = insert_label_distinct(to[j2], next, distinct, dominates, k) || added;
          }
        }
      }
    }
    return added;
  };
  auto node_of = [&](const std::vector<int>& placed, int block, int behind, int r, int last) -> Node& {
    const Key key{set_index(placed), block, behind, r, last};
    const auto [it, added] = node_index.emplace(key, static_cast<int>(nodes.size()));
    if (added) {
      nodes.push_back(Node{key, node_placed.size(), new_table()});
      node_placed.insert(node_placed.end(), placed.begin(), placed.end());
      by_r[static_cast<size_t>(r)].push_back(it->second);
    }
    return nodes[static_cast<size_t>(it->second)];
  };
  auto last_key = [&](const Block& b) { return tied ? b.shape.tp * 1000003 + b.shape.dp : 0; };
  auto remaining_of = [&](const std::vector<int>& placed) {
    std::vector<int> rest(classes.size());
    for (size_t c = 0; c < classes.size(); ++c) rest[c] = total[c] - placed[c];
    return set_index(rest);
  };

  const int closing = new_table();  // each closing's labels, copied out (nothing points into it)
  // The last block of every plan: its stages from the back, its front stage pending.
  for (int b = 0; b < static_cast<int>(blocks.size()); ++b) {
    const Block& blk = blocks[b];
    std::vector<int> placed(classes.size(), 0);
    placed[blk.cls] = 1;
    const long long remaining = remaining_of(placed);
    int table = new_table();
    tables[table][0].push_back({0, 0, 0, -1, -1, -1, 0, 0});
    const int pp = blk.shape.pp;
    for (int d = 1; d < pp; ++d) {  // local stage pp - d
      StageLinks links;
      const int local = pp - d;
      links.prev = inner_link(blk, local - 1);
      if (d > 1) links.next = inner_link(blk, local);
      const int to = new_table();
      push(tables[table], table, tables[to], b, d, false, links, b, pp, remaining, rate_of(placed));
      table = to;
      if (calls.stopped() || k->stopped) return;
    }
    Node& x = node_of(placed, b, -1, pp, last_key(blk));
    // Merge the pushed labels into the node's table (nodes of one block start here only).
    std::swap(tables[x.table], tables[table]);
  }

  std::vector<int> placed2;
  // A label's least objective through it (its own terms and the least time of the layers left).
  auto label_bound = [&](const SplitLabel& lab, int j) {
    return lab.sum_c + least_prefix[L - j] + static_cast<double>(m - 1) * lab.max_c + lab.max_tail;
  };
  for (int r = 1; r <= L; ++r) {
    std::vector<int>& bucket = by_r[static_cast<size_t>(r)];
    if (beam > 0 && static_cast<int>(bucket.size()) > beam * kBeamNodes) {
      // The beam's states: those whose best label bounds least.
      std::vector<std::pair<double, int>> ranked;
      for (int id : bucket) {
        double best = 1e300;
        const SplitTable& t = tables[nodes[static_cast<size_t>(id)].table];
        for (int j = 0; j <= L; ++j) {
          for (const SplitLabel& lab : t[j]) best = std::min(best, label_bound(lab, j));
        }
        ranked.push_back({best, id});
      }
      std::stable_sort(ranked.begin(), ranked.end());
      bucket.clear();
      for (int i = 0; i < beam * kBeamNodes; ++i) bucket.push_back(ranked[static_cast<size_t>(i)].second);
    }
    for (size_t at = 0; at < bucket.size(); ++at) {
      if (calls.stopped() || k->stopped) return;
      const int id = bucket[at];
      ++expanded;
      const Node node = nodes[static_cast<size_t>(id)];  // a copy: nodes grows below
      cur_placed.assign(node_placed.begin() + static_cast<long>(node.placed_at),
                        node_placed.begin() + static_cast<long>(node.placed_at + classes.size()));
      const Block& blk = blocks[node.key.block];
      SplitTable& table = tables[node.table];
      if (beam > 0) {  // keep the `beam` labels of least bound
        std::vector<std::pair<double, std::pair<int, int>>> ranked;
        for (int j = 0; j <= L; ++j) {
          for (int li = 0; li < static_cast<int>(table[j].size()); ++li) ranked.push_back({label_bound(table[j][li], j), {j, li}});
        }
        if (static_cast<int>(ranked.size()) > beam) {
          std::stable_sort(ranked.begin(), ranked.end());
          SplitTable kept(static_cast<size_t>(L) + 1);
          for (int i = 0; i < beam; ++i) kept[ranked[i].second.first].push_back(table[ranked[i].second.first][ranked[i].second.second]);
          for (int j = 0; j <= L; ++j) table[j] = std::move(kept[j]);
        }
      }
      int most_behind = L - 1;  // the most layers any of its labels has behind it (below L)
      while (most_behind >= 0 && table[static_cast<size_t>(most_behind)].empty()) --most_behind;
      if (most_behind < 0) continue;
      // The fewest layers left in front of its pending stage (holding all it can under the cap),
      // for the front test below.
      const int least_left =
          L - most_behind - stage_cap[static_cast<size_t>(node.key.block)][static_cast<size_t>(r)];
      // Its labels belong to their orders extended by this block.
      for (auto& cell : table) {
        for (SplitLabel& lab : cell) lab.prefix = prefix_of(lab.prefix, node.key.block);
      }
      const double rate = rate_of(cur_placed);
      // The pending stage's next link: inside the block, or to the block behind.
      StageLinks pending;
      if (blk.shape.pp > 1) pending.next = inner_link(blk, 0);
      else if (node.key.behind >= 0) pending.next = boundary(blk, blocks[node.key.behind]).next;
      // As the first stage: mesh 0's micro-batch, the tied first and last stage, search.pp.
      const bool mbs_ok = search_allows(first_mbs, blk.mbs);
      bool tied_ok = true;
      if (tied) {
        const int tp_last = node.key.last / 1000003, dp_last = node.key.last % 1000003;
        tied_ok = blk.shape.tp == tp_last &&
                  (!s.training.use_distributed_optimizer || blk.shape.dp == dp_last || blk.shape.dp % dp_last == 0 ||
                   dp_last % blk.shape.dp == 0);
      }
      if (mbs_ok && tied_ok && search_allows(s.search.pp, r)) {
        ++closed;
        // Complete plans of one set of groups bill one rate: they are compared with each other
        // only (another set's plan may be slower and cheaper: the Pareto front keeps both).
        SplitTable& fin = tables[closing];
        fin[L].clear();
        if (push(table, node.table, fin, node.key.block, r, true, pending, node.key.block, r, 0, rate)) {
          finals.insert(finals.end(), fin[L].begin(), fin[L].end());
        }
      }
      // A block of another class in front of it.
      const std::string& type = classes[blk.cls].type;
      // Its scans over the classes (each class in front: the rank-order test, the sets and rates
      // placed), in label steps: with many classes they, not the labels, are the state's work.
      k->label_steps += static_cast<long long>(classes.size() * classes.size());
      for (size_t c2 = 0; c2 < classes.size(); ++c2) {
        if (cur_placed[c2] == static_cast<int>(classes[c2].groups.size())) continue;
        // FlagScale's rank order: one device type's meshes adjacent.
        if (classes[c2].type != type) {
          bool placed_type = false;
          for (size_t c = 0; c < classes.size(); ++c) placed_type = placed_type || (cur_placed[c] > 0 && classes[c].type == classes[c2].type);
          if (placed_type) continue;
        }
        placed2 = cur_placed;
        ++placed2[c2];
        const long long remaining = remaining_of(placed2);
        const double rate2 = rate_of(placed2);
        if (!objective_admits(s.search, rate2)) continue;
        for (int b2 : blocks_of[c2]) {
          const Block& nb = blocks[b2];
          const int pp2 = nb.shape.pp, r2 = r + pp2;
          if (r2 > L) continue;
          // push()'s front test (all layers; MoE layers) for the label with the most layers
          // behind it, its pending stage holding all it can under the cap: when even that leaves
          // layers no stage in front can hold, no label passes (tested without a table, a push
          // and the boundary's links: on DeepSeek-V3 mixed-2048, 95% of the blocks tried in front
          // of a state, almost all of which held no label).
          const std::pair<int, int> in_front = front_capacity(b2, r, r2, remaining);
          if (in_front.first < least_left ||
              (num_moe > 0 && least_left > 0 && in_front.second < moe_prefix[static_cast<size_t>(least_left)])) {
            // (front_of sums the classes left when the capacity table is off)
            k->label_steps += kFrontTestSteps + (capacity_on ? 0 : static_cast<long long>(classes.size()));
            ++k->lower_bound;
            continue;
          }
          const StageLinks edge = boundary(nb, blk);
          StageLinks links = pending;
          links.prev = edge.prev;
          // Tables that end with no label are given back (the last ones made).
          const size_t mark = tables_used;
          int from = new_table();
          bool alive = push(table, node.table, tables[from], node.key.block, r, false, links, b2, r2, remaining, rate2);
          for (int d = r + 1; d < r2 && alive; ++d) {  // nb's local stage r2 - d
            const int local = r2 - d;
            StageLinks inner;
            inner.prev = inner_link(nb, local - 1);
            inner.next = d == r + 1 ? edge.next : inner_link(nb, local);
            const int to = new_table();
            alive = push(tables[from], from, tables[to], b2, d, false, inner, b2, r2, remaining, rate2);
            from = to;
          }
          if (!alive) {
            tables_used = mark;
            if (calls.stopped() || k->stopped) return;
            continue;
          }
          // The pushed table (the last made) is given back once its labels are in the node's: no
          // label points into it (its own point at the tables before it). Most tables were such
          // (5 one-node groups of distinct GPUs, Mixtral-S: 15 tables per node, 400 MB).
          const size_t made = tables_used;
          Node& x = node_of(placed2, b2, pp2 == 1 ? node.key.block : -1, r2, node.key.last);
          // pp2 == 1: the new block's one stage is pending, its next link the edge.
          if (tables_used != made) {
            // A new node takes the pushed table as it is (its labels, inserted in order into an
            // empty table, would all be kept in that order), and gives back its own empty one.
            tables_used = made;
            x.table = from;
          } else {
            SplitTable& dst = tables[x.table];
            SplitTable& src = tables[from];
            bool kept = false;
            for (int j = 0; j <= L; ++j) {
              for (const SplitLabel& lab : src[j]) kept = insert_label_distinct(dst[j], lab, distinct, dominates, k) || kept;
            }
            // When the node kept none of them, nothing points into the block's inner tables either.
            if (!kept) tables_used = mark;
            else if (static_cast<size_t>(from) + 1 == tables_used) tables_used = static_cast<size_t>(from);
          }
          if (calls.stopped() || k->stopped) return;
        }
      }
    }
  }
  // The best plan of each prefix (group order and meshes), and its best within the memory margin
  // when that one is slower, best first: the sink keeps the k best (of all; within the margin)
  // and the Pareto front of them.
  std::stable_sort(finals.begin(), finals.end(), [&](const SplitLabel& a, const SplitLabel& b) {
    return a.sum_c + static_cast<double>(m - 1) * a.max_c + a.max_tail <
           b.sum_c + static_cast<double>(m - 1) * b.max_c + b.max_tail;
  });
  std::vector<int> offered, offered_within;
  auto has = [](const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); };
  for (const SplitLabel& top : finals) {
    if (has(offered, top.prefix) && (!top.within || has(offered_within, top.prefix))) continue;
    if (!has(offered, top.prefix)) offered.push_back(top.prefix);
    if (top.within) offered_within.push_back(top.prefix);
    HeteroDpPlan plan;
    plan.objective_s = top.sum_c + static_cast<double>(m - 1) * top.max_c + top.max_tail;
    // Blocks front to back: the prefix's chain.
    std::vector<int> chain;
    for (int p = top.prefix; p > 0; p = prefixes[p].first) chain.push_back(prefixes[p].second);
    std::vector<int> taken(classes.size(), 0);
    for (int b : chain) {
      const Block& blk = blocks[b];
      plan.order.push_back(classes[blk.cls].groups[taken[blk.cls]++]);
      plan.meshes.push_back(blk.shape);
    }
    plan.micro_batch_size = blocks[chain.front()].mbs;
    plan.rate = rate_of(taken);
    // Stages front to back: the label chain.
    const SplitLabel* lab = &top;
    int j = L;
    while (lab->prev_label >= 0) {
      plan.layers.push_back(j - lab->prev_layers);
      plan.option.push_back(lab->option);
      j = lab->prev_layers;
      lab = &tables[lab->prev_table][j][lab->prev_label];
    }
    calls.offer(plan);
  }
}

// Each stage's share of L rounded down (at least one), then the layers left (or over) by the
// largest remainders. (One layer each plus shares of the rest gave a stage of cap 1 among
// stages of 5 two layers: on DeepSeek-V3 over 8 GPU types the small stages did not fit, and no
// assignment near the least cap had a split.)
std::vector<int> proportional_layers(const std::vector<int>& caps, int L) {
  const int pp = static_cast<int>(caps.size());
  long long total = 0;
  for (int c : caps) total += std::max(c, 1);
  std::vector<double> share(static_cast<size_t>(pp));
  std::vector<int> layers(static_cast<size_t>(pp));
  int placed = 0;
  for (int i = 0; i < pp; ++i) {
    share[i] = static_cast<double>(std::max(caps[i], 1)) * L / static_cast<double>(total);
    layers[i] = std::max(1, static_cast<int>(share[i]));
    placed += layers[i];
  }
  while (placed != L) {
    const bool add = placed < L;
    int pick = -1;
    double most = -1e300;
    for (int i = 0; i < pp; ++i) {
      if (!add && layers[i] <= 1) continue;
      const double gap = add ? share[i] - layers[i] : layers[i] - share[i];
      if (gap > most) most = gap, pick = i;
    }
    layers[pick] += add ? 1 : -1;
    placed += add ? 1 : -1;
  }
  return layers;
}

namespace {

// The split of proportional_layers and each stage's fastest option that fits, or nullopt when
// a stage does not fit.
std::optional<HeteroSplit> capacity_split(const HeteroSplitProblem& p, const std::vector<int>& caps,
                                          SplitCounters* counters) {
  const int pp = static_cast<int>(caps.size()), L = p.num_layers;
  if (pp < 1 || pp > L) return std::nullopt;
  HeteroSplit r;
  r.layers = proportional_layers(caps, L);
  r.option.assign(static_cast<size_t>(pp), 0);
  for (int i = 0, first = 0; i < pp; first += r.layers[i], ++i) {
    double least = std::numeric_limits<double>::infinity();
    for (size_t o = 0; o < p.options[i].size(); ++o) {
      const StageCost c = p.options[i][o].model->cost(i, first, r.layers[i], p.links[i], p.options[i][o].mesh);
      ++counters->stage_costs;
      if (usable_stage_cost(c) && c.per_microbatch_s() < least) {
        least = c.per_microbatch_s();
        r.option[i] = static_cast<int>(o);
      }
    }
    if (least == std::numeric_limits<double>::infinity()) return std::nullopt;
  }
  const std::optional<double> objective = hetero_split_objective(p, r.layers, r.option, counters);
  if (!objective) return std::nullopt;
  r.objective_s = *objective;
  return r;
}

}  // namespace

// Assignments from the capacity table at caps a little above the least feasible one, back to
// front by two rules (the block that holds the most layers; the one whose layers take the least
// time per layer), each split in proportion to the capacities; the best of them then split
// exactly below its proportional split (hetero_split.hpp): a valid plan at once, or none when
// every assignment breaks a pipeline rule or does not fit.
bool HeteroDp::State::first_plan(const Calls& calls) {
  if (blocks.empty() || feasible_cap <= 0 || calls.stopped()) return false;
  // The tp of the first and last mesh (equal when they share the embedding): each tried.
  std::vector<int> tps = {0};
  if (tied) {
    tps.clear();
    for (const Block& b : blocks) {
      if (std::find(tps.begin(), tps.end(), b.shape.tp) == tps.end()) tps.push_back(b.shape.tp);
    }
  }
  std::optional<Candidate> best, unsplit;  // the best proportional split; the first without one
  // The capacities are optimistic (the lightest layers, no stage extras): more room than the
  // layers need is asked for too. The least feasible cap favours many stages, whose bubble (the
  // sum of the stage times) may cost far more than a larger cap: larger caps are tried.
  for (double cap_factor : {1.0, 1.1, 1.25, 1.5, 2.0, 3.0}) {
    compute_capacity(feasible_cap * cap_factor);
    for (double room : {1.0, 1.1, 1.25}) {
      const int want = static_cast<int>(std::ceil((num_moe > 0 ? num_moe : L) * room));
      for (int tp : tps) {
        for (bool fastest : {false, true}) {
          std::optional<Candidate> c = first_assignment(want, tp, fastest);
          if (calls.stopped()) return false;
          if (!c) continue;
          if (!c->split) {
            if (!unsplit) unsplit = std::move(c);
          } else if (!best || c->split->objective_s < best->split->objective_s) {
            best = std::move(c);
          }
        }
      }
    }
  }
  Candidate* c = best ? &*best : unsplit ? &*unsplit : nullptr;
  if (!c) return false;
  // The exact split below the proportional one (cheap with 1,024 layers, where an exact split
  // without an incumbent takes the whole budget).
  std::optional<HeteroSplit> split = c->split;
  if (split) c->prob.incumbent_s = split->objective_s;
  if (std::optional<HeteroSplit> exact = best_hetero_split(c->prob, counters)) split = std::move(exact);
  ++closed;  // one pipeline split: an order of the budget
  if (!split) return false;
  HeteroDpPlan& plan = c->plan;
  plan.layers = split->layers;
  plan.option = split->option;
  plan.objective_s = split->objective_s;
  plan.rate = rate_of(c->taken);
  if (plan.objective_s < calls.within_threshold_s(plan.rate)) calls.offer(plan);
  // The sink ranks the plans within the memory margin first: when this split leaves less free,
  // the assignment's best split within the margin too (an incumbent for the labels within it;
  // 8 GPU types from 3 vendors: the budget ended the search with no plan within the margin
  // near the best plan). Only up to kWithinSpan x the split found (an exact split without an
  // incumbent may take the whole budget on deep models).
  if (margin > 0 && !calls.stopped()) {
    bool within = true;
    for (size_t i = 0, first = 0; i < plan.layers.size() && within; first += static_cast<size_t>(plan.layers[i]), ++i) {
      const StageOption& o = c->prob.options[i][static_cast<size_t>(plan.option[i])];
      const StageCost cost = o.model->cost(static_cast<int>(i), static_cast<int>(first), plan.layers[i], c->prob.links[i], o.mesh);
      ++counters->stage_costs;
      within = cost.within_margin(margin);
    }
    if (!within) {  // (the assignment's problem is not read again: it takes the margin)
      c->prob.margin = margin;
      c->prob.incumbent_s = std::min(calls.within_threshold_s(plan.rate), kWithinSpan * plan.objective_s);
      if (std::optional<HeteroSplit> w = best_hetero_split(c->prob, counters)) {
        plan.layers = w->layers;
        plan.option = w->option;
        plan.objective_s = w->objective_s;
        calls.offer(plan);
      }
    }
  }
  return !calls.stopped();
}

// One assignment of first_plan's (compute_capacity at its cap done): blocks picked back to
// front until they hold `want` layers, the last block (first picked) of tp `tp` (0: any) and the
// front one (the one that completes the layers) meeting the pipeline's rules for the first and
// last mesh. fastest: the block whose layers take the least time per layer (else the one that,
// with what the rest could hold, holds the most). Its proportional split when it fits.
std::optional<HeteroDp::State::Candidate> HeteroDp::State::first_assignment(int want, int tp, bool fastest) {
  std::vector<int> path, at_r;  // blocks back to front; per block, the stages behind it
  std::vector<int> left(classes.size());
  for (size_t c = 0; c < classes.size(); ++c) left[c] = static_cast<int>(classes[c].groups.size());
  // With dense and MoE layers, what the stages hold is counted in MoE layers: the all-layers
  // capacity counts the few dense layers in every stage (DeepSeek-V3: 3 of 61 layers, and an
  // H100 stage of tp 1 and ep 1 held 3 of them under the cap but 1 MoE layer).
  const std::vector<std::vector<int>>& held_at = num_moe > 0 ? stage_cap_moe : stage_cap;
  const std::vector<std::vector<int>>& any_at = num_moe > 0 ? best_any_moe : best_any;
  int r = 0, held = 0;
  while (held < want) {
    int pick = -1, pick_held = 0;
    std::pair<double, double> most;
    for (size_t cl = 0; cl < classes.size(); ++cl) {
      if (left[cl] == 0) continue;
      // FlagScale's rank order: a device type's meshes adjacent.
      if (!path.empty() && classes[cl].type != classes[blocks[path.back()].cls].type) {
        bool placed_type = false;
        for (int b : path) placed_type = placed_type || classes[blocks[b].cls].type == classes[cl].type;
        if (placed_type) continue;
      }
      // A loose guide to what the classes that may still follow hold: those of cl's type or of
      // a type not yet placed, each at its best position.
      int rest = 0;
      for (size_t c2 = 0; c2 < classes.size(); ++c2) {
        const int count = left[c2] - (c2 == cl ? 1 : 0);
        if (count <= 0) continue;
        bool ok = classes[c2].type == classes[cl].type;
        if (!ok) {
          ok = true;
          for (int b : path) ok = ok && classes[blocks[b].cls].type != classes[c2].type;
        }
        if (ok) rest += count * any_at[c2][0];
      }
      for (int b : blocks_of[cl]) {
        const Block& blk = blocks[b];
        if (r + blk.shape.pp > L) continue;
        if (path.empty() && tp > 0 && blk.shape.tp != tp) continue;
        int n = 0;
        for (int k = 1; k <= blk.shape.pp; ++k) n += held_at[b][r + k];
        if (n == 0) continue;
        const bool completes = held + n >= want;
        if (completes) {  // this block would be the first mesh
          if (!search_allows(first_mbs, blk.mbs)) continue;
          if (tied && !path.empty()) {
            const HeteroShape& back = blocks[path.front()].shape;
            const bool dp_ok = !s.training.use_distributed_optimizer || back.dp % blk.shape.dp == 0 || blk.shape.dp % back.dp == 0;
            if (blk.shape.tp != back.tp || !dp_ok) continue;
          }
        } else if (held + n + rest < want) {
          continue;  // the classes that may follow cannot complete it
        }
        // fastest: a block that completes the layers first (the fewest stages), then the most
        // layers per second of those it would hold.
        const int used = std::min(n, std::min(want - held, L));
        const std::pair<double, double> score =
            fastest ? std::pair<double, double>{completes ? 1 : 0, used / std::max((*blk.least_sum)[static_cast<size_t>(used)], 1e-300)}
                    : std::pair<double, double>{std::min(want, held + n) + (completes ? want : rest), 0};
        if (pick < 0 || score > most) most = score, pick = b, pick_held = n;
      }
    }
    if (pick < 0) break;
    path.push_back(pick);
    at_r.push_back(r);
    held += pick_held;
    r += blocks[pick].shape.pp;
    --left[blocks[pick].cls];
  }
  if (held < want || r > L) return std::nullopt;
  std::reverse(path.begin(), path.end());  // front to back
  std::reverse(at_r.begin(), at_r.end());
  Candidate c;
  HeteroDpPlan& plan = c.plan;
  c.taken.assign(classes.size(), 0);
  for (int b : path) {
    plan.order.push_back(classes[blocks[b].cls].groups[c.taken[blocks[b].cls]++]);
    plan.meshes.push_back(blocks[b].shape);
  }
  plan.micro_batch_size = blocks[path.front()].mbs;
  // The search lists bound the space as the DP's closing does: mesh 0's micro-batch, the pp.
  if (!search_allows(first_mbs, plan.micro_batch_size) || !search_allows(s.search.pp, r)) return std::nullopt;
  std::vector<int> placeholder(static_cast<size_t>(r), 1);  // the split comes later
  placeholder.back() = L - r + 1;
  const PlanSpec p = hetero_plan_of(s, plan.order, plan.meshes, plan.micro_batch_size, placeholder,
                                    std::vector<Recompute>(static_cast<size_t>(r), run.recompute.front()), run.offload);
  if (check_hetero_plan_rules(s, p)) return std::nullopt;
  HeteroSplitProblem& prob = c.prob;
  prob.num_layers = L;
  prob.links = hetero_stage_links(s.cluster, p);
  prob.num_microbatches = m;
  prob.max_stage_costs = counters->max_work;
  std::vector<int> stage_caps;  // front to back
  for (size_t x = 0; x < path.size(); ++x) {
    const Block& blk = blocks[path[x]];
    for (int k = 0; k < blk.shape.pp; ++k) {
      stage_caps.push_back(held_at[path[x]][at_r[x] + blk.shape.pp - k]);
      std::vector<StageOption> opts;
      for (size_t o = 0; o < blk.models.size(); ++o) {
        Mesh mesh = blk.meshes[o];
        mesh.pp = r;
        opts.push_back({blk.models[o], mesh});
      }
      prob.options.push_back(std::move(opts));
    }
  }
  c.split = capacity_split(prob, stage_caps, counters);
  return c;
}

HeteroDp::HeteroDp(const Scenario& s, StageModelCache& cache, const HeteroRun& run,
                   const std::vector<std::vector<HeteroShape>>& shapes, int distinct, SplitCounters* counters,
                   HeteroShared* shared)
    : st_(std::make_unique<State>(s, cache, run, distinct, counters, shared)) {
  st_->build(shapes);
}

HeteroDp::~HeteroDp() = default;

size_t HeteroShared::MeshKeyHash::operator()(const MeshKey& k) const {
  Fnv1a h;
  h.add(static_cast<uint64_t>(k.group) << 32 | static_cast<uint32_t>(k.shape));
  h.add(static_cast<uint64_t>(k.mbs));
  uint64_t bits;
  std::memcpy(&bits, &k.offload, sizeof bits);
  h.add(bits);
  return static_cast<size_t>(h.value());
}

size_t HeteroShared::ModelsHash::operator()(const std::vector<const StageCostModel*>& models) const {
  Fnv1a h;
  for (const StageCostModel* m : models) h.add(reinterpret_cast<uintptr_t>(m));
  return static_cast<size_t>(h.value());
}

size_t HeteroShared::CapKeyHash::operator()(const CapKey& k) const {
  Fnv1a h;
  h.add(reinterpret_cast<uintptr_t>(k.model));
  h.add(static_cast<uint64_t>(k.dp));
  h.add(static_cast<uint64_t>(k.m));
  uint64_t bits;
  std::memcpy(&bits, &k.offload, sizeof bits);
  h.add(bits);
  return static_cast<size_t>(h.value());
}

double HeteroDp::lower_bound_s(double cap_hint) { return st_->lower_bound(cap_hint); }

double HeteroDp::least_cap() const { return st_->feasible_cap; }

void HeteroDp::set_least_cap(double cap) { st_->feasible_cap = cap; }

bool HeteroDp::first_plan(const Calls& calls) { return st_->first_plan(calls); }

void HeteroDp::search(const Calls& calls, double below_s, int beam) {
  st_->search(calls, below_s, beam);
}

long long HeteroDp::closed() const { return st_->closed; }

long long HeteroDp::expanded() const { return st_->expanded; }

size_t HeteroDp::footprint_bytes() const {
  const State& st = *st_;
  size_t bytes = (st.front.capacity() + st.front_moe.capacity() + st.node_placed.capacity()) * sizeof(int) +
                 st.sigma.capacity() * sizeof(double) + st.nodes.capacity() * sizeof(State::Node);
  for (const auto* caps : {&st.stage_cap, &st.stage_cap_moe}) {
    for (const std::vector<int>& c : *caps) bytes += c.capacity() * sizeof(int);
  }
  return bytes;
}

long long HeteroDp::build_units() const {
  long long units = 0;
  for (const State::Block& b : st_->blocks) units += 8 + static_cast<long long>(b.models.size()) * (st_->L / 4 + 1);
  return units + static_cast<long long>(st_->classes.size()) * 8;
}

}  // namespace hapmoe
