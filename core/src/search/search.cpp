// Search driver: (mesh shape, group set) entries sorted by a lower bound that holds for every
// order and split; for each entry below the k-th best plan so far, a tighter bottleneck bound,
// then every distinct stage order with the exact layer-split DP against that incumbent.
#include "hapmoe/search.hpp"

#include <algorithm>
#include <cstring>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>

#include "search/baselines.hpp"
#include "search/candidate_cost.hpp"
#include "search/candidate_space.hpp"
#include "search/diagnosis.hpp"
#include "search/layer_split_dp.hpp"
#include "search/order_dp.hpp"
#include "search/search_budget.hpp"
#include "search/plan_sink.hpp"
#include "search/top_plans.hpp"
#include "evaluate/rules.hpp"
#include "spec/stable_map.hpp"

namespace hapmoe {

namespace {

std::optional<Error> check_request(const Scenario& s) {
  if (!s.search.layer_split.empty()) {
    long long sum = 0;
    for (int x : s.search.layer_split) sum += x;
    if (sum != s.model.num_layers) {
      return Error{"bad_value", "layer_split adds up to " + std::to_string(sum) + ", the model has " +
                                    std::to_string(s.model.num_layers) + " layers",
                   "search.layer_split"};
    }
  }
  return std::nullopt;
}

// Per-layer times and parameter totals of each stage cost model, computed once.
class LayerTimesCache {
 public:
  LayerTimesCache(int num_layers) : num_layers_(num_layers) {}
  const GroupLayerTimes& get(const StageCostModel* m) {
    return times_.get(m, [&] {
      GroupLayerTimes t = group_layer_times(*m, num_layers_);
      // Equal per-layer kind lists share one pointer (the first model's; the models outlive this
      // cache), so that cheapest_layers_sum_s, called for every group set, compares pointers.
      if (t.kind_of) {
        const auto same = std::find_if(kinds_.begin(), kinds_.end(), [&](const auto* k) { return *k == *t.kind_of; });
        if (same != kinds_.end()) t.kind_of = *same;
        else kinds_.push_back(t.kind_of);
      }
      return t;
    });
  }

 private:
  std::vector<const std::vector<unsigned char>*> kinds_;  // the distinct kind lists seen
  int num_layers_;
  StableMap<const StageCostModel*, GroupLayerTimes, std::hash<const StageCostModel*>> times_;
};

// Stage cost models and layer times by (model class, EP overlap, group), direct mapped (its
// memory stays fixed): the shapes of a class, which differ in dp, vpp and offload only, share
// their groups' models, so a shape's entries find them without hashing the mesh's fields again
// (a search walks thousands of shapes).
class ClassModels {
 public:
  ClassModels(StageModelCache& cache, LayerTimesCache& times) : cache_(cache), times_(times) {}
  struct Found {
    const StageCostModel* model = nullptr;
    const GroupLayerTimes* times = nullptr;
  };
  // 1 + (the shape's model class, the EP overlap of its complete mesh), which decide the stage
  // models of each group; 0 when the shape has no class.
  static uint64_t class_of(const MeshShape& shape, const Mesh& mesh) {
    if (shape.model_class < 0) return 0;
    return static_cast<uint64_t>(shape.model_class) * 2 + (mesh.ep_comm_overlap ? 1 : 0) + 1;
  }
  // mesh: the shape's complete mesh (its EP overlap decided).
  Found get(const MeshShape& shape, const Mesh& mesh, int g) {
    const uint64_t of = class_of(shape, mesh);
    if (of == 0) return make(mesh, g);
    const uint64_t key = (of - 1) * shape.stages_per_group().size() + static_cast<uint64_t>(g) + 1;
    if (slots_.empty()) slots_.resize(kSlots);
    Slot& slot = slots_[(key * 0x9E3779B97F4A7C15ull >> 32) % kSlots];
    if (slot.key != key) slot = {key, make(mesh, g)};
    return slot.found;
  }

 private:
  Found make(const Mesh& mesh, int g) {
    const StageCostModel* model = cache_.get(mesh, g);
    return {model, &times_.get(model)};
  }
  struct Slot {
    uint64_t key = 0;  // 0: unused
    Found found;
  };
  static constexpr size_t kSlots = 8192;
  StageModelCache& cache_;
  LayerTimesCache& times_;
  std::vector<Slot> slots_;
};

// What every part of one search shares.
struct SearchContext {
  const Scenario& s;
  const CandidateSpace& space;
  StageModelCache& cache;
  LayerTimesCache& times;
  ClassModels& models;
  const SearchBudget& budget;
  SearchStats& st;
};

// Builds the (bound, shape, set) entries, read in bound order: every group set of every shape
// that passes the pipeline rules and the static memory bound.
// The least group sets of a shape (counted as CandidateSpace::group_set_count: 3 on two eligible
// groups, 7 on three) for the build to bound the shape before walking them, when a search wants
// plans below a time only: the bound costs about as much as building three entries (two models
// per group, one per EP overlap) and, on the set of all the shape's groups, is the loosest of
// theirs. With it on every shape, the offload retry took 3.2x the first pass on the paper's
// Mixtral-L 32-2 (megatron), 1.6x without it; on DeepSeek-V3 mixed-2048 it saves 12%.
constexpr long long kShapeBoundMinSets = 4;

struct EntryBuilder : SearchContext {
  explicit EntryBuilder(const SearchContext& c) : SearchContext(c) {}

  std::vector<GroupSet> sets;
  SortedEntries entries;  // filled by build()
  double min_shortfall = -1;
  long long walked = 0;  // group sets walked by build() (cut ones too), in budget units
  std::unordered_map<std::vector<int>, int, IntsHash> set_ids;

  std::vector<int> set_ids_flat;  // the same, indexed by the group bit mask (< 17 groups; -1 = none yet)

  int set_id(const GroupSet& g) {
    if (s.cluster.groups.size() <= 16) {
      uint64_t mask = 0;
      for (int x : g.groups) mask |= uint64_t{1} << x;
      if (set_ids_flat.empty()) set_ids_flat.assign(size_t{1} << s.cluster.groups.size(), -1);
      int& id = set_ids_flat[mask];
      if (id < 0) {
        id = static_cast<int>(sets.size());
        sets.push_back(g);
      }
      return id;
    }
    auto it = set_ids.find(g.groups);  // look up before building a node for the key
    if (it != set_ids.end()) return it->second;
    it = set_ids.emplace(g.groups, static_cast<int>(sets.size())).first;
    sets.push_back(g);
    return it->second;
  }

  // Kept out of line (as is add()): inlined, the driver was one 22 KB wasm function whose
  // optimizing compile took 100-200 ms of CPU in the browser while the page's first plan ran.
  // progress(fraction of the build done).
  [[gnu::noinline]] void build(const std::function<void(double)>& progress) {
    const size_t n = space.shapes().size();
    std::vector<long long> counts(n);
    for (size_t i = 0; i < n; ++i) counts[i] = space.group_set_count(space.shapes()[i]);
    // A set's walk (with its entry, when it passes) reads every class of groups: with many
    // distinct groups one set counts as several (natively ~90 ns a set with 16 classes of
    // groups, ~150 ns with 64).
    const long long classes = 1 + *std::max_element(space.group_class().begin(), space.group_class().end());
    const long long units = 1 + classes / 32;
    // A search that only wants plans below a time (the offload retry) leaves out the shapes no
    // group set of which can beat it (nor, with a memory margin, the plans within it wanted).
    const double above = s.search.memory_margin_fraction > 0 ? std::max(budget.prune_above, budget.within_prune_above)
                                                              : budget.prune_above;
    if (above < 1e300) {
      // The bound reads no offload fraction, the last field the space varies: shapes that differ
      // in it alone are consecutive and share their bound. Shapes of fewer group sets than
      // kShapeBoundMinSets are left to their entries' bounds, and shapes none of whose sets fits
      // to add(), which cuts each set before any cost model is made (bounding them made the
      // offload retry build 3.5x the models of the first pass on the paper's Mixtral-L 32-2).
      const MeshShape* last = nullptr;  // the last shape bounded
      double last_bound = 0;
      for (size_t i = 0; i < n; ++i) {
        if (counts[i] < kShapeBoundMinSets) continue;
        const MeshShape& shape = space.shapes()[i];
        if (!some_set_fits(shape)) continue;
        if (!last || !same_but_offload(*last, shape)) last_bound = shape_lower_bound_s(shape);
        last = &shape;
        if (last_bound >= above) {
          st.pruned["entry_lower_bound"] += counts[i];
          counts[i] = 0;
        }
      }
    }
    const std::vector<long long> allowed = walk_allowance(counts, budget.max_group_sets / units);
    for (size_t i = 0; i < n; ++i) {
      if (i % 64 == 0 && past_deadline(budget)) {
        st.reached("seconds");
        st.shapes_cut_short += static_cast<long long>(n - i);
        break;
      }
      if (progress && i % 64 == 0) progress(static_cast<double>(i) / n);
      if (allowed[i] < counts[i]) {
        st.reached("group_sets");
        ++st.shapes_cut_short;
      }
      if (allowed[i] == 0) continue;
      const MeshShape& shape = space.shapes()[i];
      count_rules();
      shape_need_known = false;
      long long sets_left = allowed[i];
      space.for_each_group_set(shape, [&](const GroupSet& set) { return add(static_cast<int>(i), shape, set); }, &set_cuts_,
                               &sets_left);
      walked += (allowed[i] - sets_left) * units;
    }
    count_rules();
    cuts_.add_to(&st.pruned);
    set_cuts_.add_to(&st.pruned);
    if (memory_bound > 0) st.pruned["memory_bound"] += memory_bound;
    if (st.entries_dropped > 0) st.reached("entries");
    entries.assign(std::move(built_));
  }

 private:
  // A lower bound on every group set of the shape: the set of all its groups has the most stages
  // and the least layer times, so the fractional bound (sum_c / v + (m - 1/v) max c, max c at
  // least the layers, and the MoE layers, over the stages' speed, and sum_c / pp) of that set holds
  // for each; with the EP overlap decided by pp, the lesser of both.
  double shape_lower_bound_s(const MeshShape& shape) {
    const GroupSet& all = all_groups(shape);
    if (all.groups.empty()) return 1e300;
    Mesh mesh = space.mesh_for(shape, all);
    const long long m = num_microbatches(s.training, mesh);
    double least = 1e300;
    for (bool overlap : {false, true}) {
      if (overlap != mesh.ep_comm_overlap && !shape.ep_overlap_auto) continue;
      Mesh x = mesh;
      x.ep_comm_overlap = overlap;
      std::vector<const GroupLayerTimes*>& tv = bound_tv_;
      tv.clear();
      double per_s = 0, moe_per_s = 0;
      int pp = 0;
      for (int g : all.groups) {
        tv.push_back(models.get(shape, x, g).times);
        const int stages = shape.stages_per_group()[g];
        pp += stages;
        per_s += stages / tv.back()->min_layer_s;
        if (tv.back()->cheapest_moe_sum_s.size() > 1) moe_per_s += stages / tv.back()->cheapest_moe_sum_s[1];
      }
      const int L = s.model.num_layers;
      const int num_moe = static_cast<int>(tv.front()->cheapest_moe_sum_s.size()) - 1;
      const double sum_c = cheapest_sum(tv);
      double max_c = std::max(sum_c / pp, L / per_s);
      if (num_moe > 0 && num_moe < L) max_c = std::max(max_c, num_moe / moe_per_s);
      const double v = std::max(1, x.vpp);
      least = std::min(least, sum_c / v + (static_cast<double>(m) - 1 / v) * max_c);
    }
    return least;
  }

  // The set of all the groups that hold stages of the shape (in bound_set_, until the next call).
  const GroupSet& all_groups(const MeshShape& shape) {
    bound_set_.groups.clear();
    for (size_t g = 0; g < shape.stages_per_group().size(); ++g) {
      if (shape.stages_per_group()[g] > 0) bound_set_.groups.push_back(static_cast<int>(g));
    }
    return bound_set_;
  }
  GroupSet bound_set_;  // all_groups' scratch

  // The static memory bound's need per GPU, the same for every set of a shape (pp and the EP
  // overlap do not enter it).
  double static_need_bytes(const Mesh& mesh) {
    const auto [dense, expert] = cache.layer_params(mesh);
    return static_memory_need_bytes(s, mesh, dense, expert);
  }

  // Whether some group set of the shape passes add()'s static memory bound: the room is largest
  // on the set of all the shape's groups.
  bool some_set_fits(const MeshShape& shape) {
    return static_need_bytes(shape.mesh) <= static_memory_room_bytes(s, all_groups(shape).groups, shape.stages_per_group());
  }

  // Whether two shapes differ in their offload fraction at most.
  static bool same_but_offload(const MeshShape& a, const MeshShape& b) {
    const Mesh& x = a.mesh;
    const Mesh& y = b.mesh;
    return a.stages_ == b.stages_ && a.ep_overlap_auto == b.ep_overlap_auto && x.tp == y.tp && x.cp == y.cp &&
           x.ep == y.ep && x.etp == y.etp && x.dp == y.dp && x.pp == y.pp && x.vpp == y.vpp &&
           x.micro_batch_size == y.micro_batch_size && x.sequence_parallel == y.sequence_parallel &&
           x.recompute.key() == y.recompute.key() && x.ep_comm_overlap == y.ep_comm_overlap &&
           x.dispatch == y.dispatch && x.cuda_graphs.key() == y.cuda_graphs.key();
  }
  std::vector<const GroupLayerTimes*> bound_tv_;  // shape_lower_bound_s scratch

  struct PipelineRule {
    int pp;
    std::string_view rule;  // "" = passes
    long long cut;          // sets cut by it in this shape
    Mesh mesh;              // the shape's complete mesh at this pp
  };
  std::vector<PipelineRule> rule_of_pp;             // the current shape's pipeline rules by pp
  double shape_need = 0;                            // its static_memory_need_bytes, once known
  bool shape_need_known = false;
  long long memory_bound = 0;                       // counted here, added to st.pruned once
  std::vector<SearchEntry> built_;                  // entries as add() makes them
  std::vector<const GroupLayerTimes*> tv;           // add() scratch
  std::vector<int> stages;
  // cheapest_layers_sum_s of a set's layer times, for every set. By kind, it depends on the
  // times only through the kinds' least times (the fastest group's, mostly), so it is kept by
  // those: direct mapped, so its memory stays fixed.
  struct SumSlot {
    const std::vector<unsigned char>* kind_of = nullptr;  // null: unused
    size_t kinds = 0;
    double least[kMaxLayerKinds];
    double sum = 0;
  };
  static constexpr size_t kSumSlots = 1024;
  std::vector<SumSlot> sum_slots_;

  double cheapest_sum(const std::vector<const GroupLayerTimes*>& times) {
    double least[kMaxLayerKinds];
    size_t kinds = 0;
    if (!cheapest_kind_times(times, s.model.num_layers, least, &kinds)) {
      return cheapest_layers_sum_s(times, s.model.num_layers);
    }
    const std::vector<unsigned char>* kind_of = times.front()->kind_of;
    if (sum_slots_.empty()) sum_slots_.resize(kSumSlots);
    Fnv1a f;
    f.add(reinterpret_cast<uintptr_t>(kind_of));
    for (size_t k = 0; k < kinds; ++k) {
      uint64_t bits;
      std::memcpy(&bits, &least[k], sizeof bits);
      f.add(bits);
    }
    const uint64_t h = f.value();
    SumSlot& slot = sum_slots_[(h ^ (h >> 29)) % kSumSlots];
    // Exactly the same least times (bit for bit, as the hash), so the same sum.
    if (slot.kind_of != kind_of || slot.kinds != kinds || std::memcmp(slot.least, least, kinds * sizeof(double)) != 0) {
      slot.kind_of = kind_of;
      slot.kinds = kinds;
      std::memcpy(slot.least, least, kinds * sizeof(double));
      slot.sum = kind_times_sum_s(*kind_of, least);
    }
    return slot.sum;
  }

  // cheapest_sum of a set's layer times by (model class, EP overlap, the set's groups), direct
  // mapped: the times depend on nothing else (ClassModels), and the shapes of a class (dp, vpp and
  // offload variants) bound the same sets again.
  struct ClassSumSlot {
    uint64_t class_key = 0;  // ClassModels::class_of; 0: unused
    uint64_t mask = 0;
    double sum = 0;
  };
  static constexpr size_t kClassSumSlots = 4096;
  std::vector<ClassSumSlot> class_sums_;
  double class_sum(const MeshShape& shape, const Mesh& mesh, uint64_t mask, const std::vector<const GroupLayerTimes*>& tv) {
    const uint64_t key = ClassModels::class_of(shape, mesh);
    if (key == 0 || shape.stages_per_group().size() > 64) return cheapest_sum(tv);
    if (class_sums_.empty()) class_sums_.resize(kClassSumSlots);
    const uint64_t h = (key * 0x9E3779B97F4A7C15ull) ^ (mask * 0xC2B2AE3D27D4EB4Full);
    ClassSumSlot& slot = class_sums_[(h >> 32) % kClassSumSlots];
    if (slot.class_key != key || slot.mask != mask) slot = {key, mask, cheapest_sum(tv)};
    return slot.sum;
  }

  // Sets cut by the pipeline rules, and by the set rules and pp range (apart: a tally is
  // quickest counting one rule after another), added to st.pruned once.
  RuleTally cuts_, set_cuts_;

  void count_rules() {
    for (const PipelineRule& r : rule_of_pp) {
      if (r.cut > 0) cuts_.count(r.rule, r.cut);
    }
    rule_of_pp.clear();
  }

  // The entry of one group set of shape (number shape_index), unless a rule or the static memory
  // bound cuts it; false once the entry budget is spent.
  [[gnu::noinline]] bool add(int shape_index, const MeshShape& shape, const GroupSet& set) {
    // The mesh and the pipeline rules depend on the set only through pp: made and checked once per pp.
    const int pp = CandidateSpace::pp_of(shape, set);
    auto known = std::find_if(rule_of_pp.begin(), rule_of_pp.end(), [&](const auto& r) { return r.pp == pp; });
    if (known == rule_of_pp.end()) {
      PipelineRule r{pp, {}, 0, {}};
      space.complete_mesh(shape, set, &r.mesh, &r.rule);
      known = rule_of_pp.insert(rule_of_pp.end(), r);
    }
    if (!known->rule.empty()) {
      ++known->cut;
      return true;
    }
    const Mesh& mesh = known->mesh;
    ++st.candidates;
    if (!shape_need_known) {
      shape_need = static_need_bytes(mesh);
      shape_need_known = true;
    }
    const double shortfall = shape_need - static_memory_room_bytes(s, set.groups, shape.stages_per_group());
    if (shortfall > 0) {
      ++memory_bound;
      if (min_shortfall < 0 || shortfall < min_shortfall) min_shortfall = shortfall;
      return true;
    }
    tv.clear();
    stages.clear();
    // A group's stage model is the same for every set of the shape but for the EP overlap, which
    // depends on pp (ep_overlap_auto): kept by class, overlap and group.
    uint64_t mask = 0;  // the set's groups (when fewer than 65)
    for (int g : set.groups) {
      tv.push_back(models.get(shape, mesh, g).times);
      stages.push_back(shape.stages_per_group()[g]);
      mask |= uint64_t{1} << (g & 63);
    }
    const double sum_c = class_sum(shape, mesh, mask, tv);
    const double bound = set_lower_bound_s(tv, stages, s.model.num_layers, num_microbatches(s.training, mesh), mesh.vpp,
                                           true, nullptr, &sum_c);
    keep({bound, shape_index, -1}, set);
    return true;
  }

  // Adds the entry, within budget.max_entries: past it the entries with the highest bounds are
  // dropped (a heap on built_), the ones the search would read last, so that the limit never
  // leaves the later mesh shapes out. The heap's order is total (bound, shape, then the set's
  // groups, not its id): which entries are kept does not depend on the standard library's heap.
  void keep(SearchEntry e, const GroupSet& set) {
    auto before = [](const SearchEntry& a, const std::vector<int>& ga, const SearchEntry& b, const std::vector<int>& gb) {
      if (a.bound_s != b.bound_s) return a.bound_s < b.bound_s;
      if (a.shape != b.shape) return a.shape < b.shape;
      return ga < gb;
    };
    const auto later = [&](const SearchEntry& a, const SearchEntry& b) {  // a max-heap
      return before(a, sets[a.set].groups, b, sets[b.set].groups);
    };
    if (static_cast<long long>(built_.size()) < budget.max_entries) {
      e.set = set_id(set);
      built_.push_back(e);
      if (static_cast<long long>(built_.size()) == budget.max_entries) std::make_heap(built_.begin(), built_.end(), later);
      return;
    }
    ++st.entries_dropped;
    if (built_.empty() || !before(e, set.groups, built_.front(), sets[built_.front().set].groups)) return;
    std::pop_heap(built_.begin(), built_.end(), later);
    e.set = set_id(set);
    built_.back() = e;
    std::push_heap(built_.begin(), built_.end(), later);
  }
};

// Label cells (nodes x layer counts) the merged DP of an entry may hold; beyond (many distinct
// GPU groups in one set) its orders are walked one by one.
constexpr long long kMaxMergedCells = 1LL << 22;
// The merged DP of an entry first looks for plans within this share above the entry's bound.
constexpr double kGuessOver = 0.02;
// ... up to this share above it; past it, below the k-th plan.
constexpr double kGuessMax = 1.0;
// Entries whose first-guess order is split before the full walk.
constexpr size_t kFirstGuesses = 64;
// Entry bounds computed in a row at most before the best entry known is searched.
constexpr long long kMaxBoundsAhead = 1024;

// USD per hour an entry's plans bill: its stages per group times the stage's GPUs (0 without
// prices). Every order and split of the entry bills the same.
double entry_rate(const BilledRates& rates, const MeshShape& shape, const GroupSet& set) {
  double rate = rates.fixed();
  for (int g : set.groups) rate += rates.used(g, shape.stages_per_group()[g] * shape.mesh.stage_gpus());
  return rate;
}

// Searches every stage order of one (mesh shape, group set) entry against the incumbent: a
// position-aware bound per entry, per order prefix and per order; the layer-split DP pushed
// stage by stage along a depth-first walk over orders, so a prefix is split once for all the
// orders that start with it. A stage is pushed once its next link is known, i.e. when the block
// after it is placed (or at the end of the pipeline).
class EntrySearch {
 public:
  EntrySearch(const SearchContext& c, SplitCounters& counters, IncrementalSplit& dp, PlanSink& top,
              std::function<void()> tick)
      : c_(c), s_(c.s), st_(c.st), counters_(counters), dp_(dp), top_(top), tick_(std::move(tick)) {}

  // Splits one order of the entry: the groups by descending free memory per stage (early
  // stages keep more micro-batches in flight), then speed. Seeds the incumbent cheaply.
  // tag: the entry's (the sink keeps one plan per tag).
  void run_first_guess(const MeshShape& shape, const GroupSet& set, long long tag) {
    tag_ = tag;
    if (!begin(shape, set) || !s_.search.layer_split.empty()) return;
    leaf(first_guess_order(shape));
  }

  // Adds the entries and orders its bounds cut to *pruned (counted by rule name here, not looked
  // up by name in the stats' map at every cut).
  void add_counts_to(PruneCounts* pruned) const { pruned_.add_to(pruned); }

  // Orders searched so far (4 order-bound checks count as one), for the budget.
  long long orders_used() const { return st_.evaluated + work_ / 4; }
  // Whether the order, stage-cost or time budget ended the search.
  bool spent() const { return spent_; }

  // Explores the entry (skipping its first-guess order when that was split already); false when
  // the budget ended the search.
  // bound_s: a lower bound on the entry's plans (its position bound).
  bool run(const MeshShape& shape, const GroupSet& set, bool guessed, long long tag, double bound_s = 0) {
    tag_ = tag;
    if (!begin(shape, set)) return !spent_;
    const std::vector<int>& fixed = s_.search.layer_split;
    if (!fixed.empty() && *std::min_element(fixed.begin(), fixed.end()) < std::max(1, mesh_.vpp)) {
      pruned_.count("stage_layers_at_least_vpp");
      return true;
    }
    if (fixed.empty() && merge_orders(shape)) {
      // The DP is fast under a tight cap: it first looks for plans below a time a little above
      // the entry's bound, then a larger one, until one is found (the entry's best: a better plan
      // would be below that time too) or the time reaches what the entry must beat anyway.
      for (double over = kGuessOver; over <= kGuessMax && bound_s * (1 + over) < within_threshold_s(); over *= 2) {
        guess_s_ = bound_s * (1 + over);
        const bool found = run_merged(shape), ran_out = spent_;
        guess_s_ = 1e300;
        if (ran_out) return false;
        if (found) return true;
      }
      run_merged(shape);
      return !spent_;
    }
    const std::vector<int> skip = guessed && fixed.empty() ? first_guess_order(shape) : std::vector<int>{};
    depths_.clear();
    c_.space.for_each_order(
        shape, set, [&](const std::vector<int>& prefix, const std::vector<int>& rest) { return keep(prefix, rest); },
        [&](const std::vector<int>&) { leave(); },
        [&](const std::vector<int>& stage_groups) { return stage_groups == skip || leaf(stage_groups); });
    return !spent_;
  }

 private:
  // The set's classes of identical groups (OrderDp::Class), in class order.
  std::vector<OrderDp::Class> set_classes(const MeshShape& shape) const {
    const std::vector<int>& class_of = c_.space.group_class();
    std::vector<int> ids;  // class ids in the set, ascending
    for (int g : set_->groups) ids.push_back(class_of[g]);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    std::vector<OrderDp::Class> classes(ids.size());
    for (int g : set_->groups) {  // ascending: the lowest-index groups of a class come first
      OrderDp::Class& c = classes[std::lower_bound(ids.begin(), ids.end(), class_of[g]) - ids.begin()];
      c.groups.push_back(g);
      c.stages = shape.stages_per_group()[g];
    }
    return classes;
  }

  // Whether the entry's orders are searched by OrderDp rather than one by one: unless its sets
  // of groups placed are too many to hold a table each.
  bool merge_orders(const MeshShape& shape) const {
    return OrderDp::node_count(set_classes(shape)) * (s_.model.num_layers + 1) <= kMaxMergedCells;
  }

  // Every order of the entry by OrderDp; true when it offered a plan.
  bool run_merged(const MeshShape& shape) {
    const std::vector<OrderDp::Class> classes = set_classes(shape);
    const int L = s_.model.num_layers;
    pipeline_.reset(mesh_, L, m_, cheapest_layer_times(models_, L), cheapest_last_extra_s(models_), margin_);
    OrderDp::Calls calls;
    calls.push = [&](int stage, int group, const StageLinks& links, const std::vector<std::vector<int>>& later,
                     int min_reach, const SplitTable& from, int from_id, SplitTable* to) {
      ++work_;  // one order bound's worth per push
      if (over_budget()) return false;
      if (++leaves_ % 256 == 0 && tick_) tick_();  // progress (and cancel) inside long searches
      for (size_t p = static_cast<size_t>(stage) + 1; p < later.size(); ++p) {
        options_[p].clear();
        for (int g : later[p]) options_[p].push_back(index_of(g));
      }
      const LaterStages& rest = later_stages(stage + 1);
      const StageCostModel* model = models_[index_of(group)];
      const long long after_max = std::min<long long>(rest.layers_fit, L - min_reach);
      return pipeline_.push(stage, from, from_id, to, *model, links, threshold_s(), within_threshold_s(), &counters_,
                            after_max, &rest.rest_floor, memos_.get(stage, model, links));
    };
    // The backward pass asks for one stage's costs several times in a row: its memo is kept.
    struct Last {
      int stage = -1, group = -1;
      StageLinks links;
      const StageCostModel* model = nullptr;
      StageCostMemo* memo = nullptr;
    } last;
    calls.time = [&](int stage, int group, const StageLinks& links, int j, int n) {
      if (stage != last.stage || group != last.group || !same_links(links, last.links)) {
        const StageCostModel* model = models_[index_of(group)];
        last = {stage, group, links, model, memos_.get(stage, model, links)};
      }
      const StageCostModel* model = last.model;
      StageCostMemo* memo = last.memo;
      StageCostMemo::Item one;
      StageCostMemo::Item& c = memo ? memo->row(j, n)[n] : one;
      if (!memo || !memo->known(c)) {
        StageCostMemo& m = memo ? *memo : scratch_memo_;
        m.set(&c, model->cost(stage, j, n, links, mesh_), pipeline_.margin());  // as its pushes
        ++counters_.stage_costs;
      }
      return c.usable ? c.a : std::numeric_limits<double>::infinity();
    };
    calls.link = [&](int a, long long la, int b, long long lb) {
      return stage_link(s_.cluster, mesh_.stage_gpus(), a, la, b, lb);
    };
    calls.stopped = [&] { return spent_ || counters_.stopped || st_.cancelled || over_budget(); };
    calls.incumbent_s = [&] { return threshold_s(); };
    calls.within_incumbent_s = [&] { return within_threshold_s(); };
    // Whether the entry's best plan was offered: with a margin, its best within the margin (the
    // best of all, when not within it, is offered first).
    bool offered = false;
    calls.offer = [&](const std::vector<int>& stage_groups, const std::vector<int>& layers, double objective_s) {
      ++st_.evaluated;
      const SplitProblem p = make_split_problem(s_, mesh_, stage_groups, c_.cache);
      PlanSpec plan = plan_of(mesh_, s_.cluster, stage_groups, layers);
      PlanEvaluation ev = evaluate_split_problem(s_, p, plan);
      offered = offered || !(margin_ > 0) || within_margin(ev, margin_);
      top_.offer(objective_s, rate_, plan_key(plan), std::move(ev), tag_);
    };
    order_dp_.run(classes, pipeline_, calls, pipeline_.cap_s(within_threshold_s()));
    if (order_dp_.last_infeasible()) pruned_.count("order_reach_bound");
    return offered;
  }

  std::vector<int> first_guess_order(const MeshShape& shape) const {
    std::vector<int> order = set_->groups;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      const GroupBoundTerms& x = *terms_[index_of(a)];
      const GroupBoundTerms& y = *terms_[index_of(b)];
      if (x.room_bytes != y.room_bytes) return x.room_bytes > y.room_bytes;
      return x.times->min_layer_s < y.times->min_layer_s;
    });
    std::vector<int> stage_groups;
    for (int g : order) stage_groups.insert(stage_groups.end(), shape.stages_per_group()[g], g);
    return stage_groups;
  }

 public:
  // Mesh and position bound of an entry: the bound (1e300 when nothing of the entry fits), or
  // a value at or above the threshold when the entry cannot beat it (counted by rule then).
  // Prepares what begin() does but the DP.
  double bound_of(const MeshShape& shape, const GroupSet& set) {
    if (over_budget()) return 1e300;
    set_ = &set;
    shape_ = &shape;
    rate_ = entry_rate(rates_, shape, set);
    c_.space.complete_mesh(shape, set, &mesh_, &rule_);
    m_ = num_microbatches(s_.training, mesh_);
    double value = 0;
    prepared_ = prepare_bounds(shape, &value);
    set_ = nullptr;  // begin() prepares again
    shape_ = nullptr;
    return prepared_ ? value : std::max(value, within_threshold_s());
  }

 private:

  // Mesh, bounds and DP of the entry; false when the entry's own bounds cut it.
  bool begin(const MeshShape& shape, const GroupSet& set) {
    if (set_ == &set && shape_ == &shape) return prepared_;  // run() after run_first_guess()
    if (over_budget()) return false;
    set_ = &set;
    shape_ = &shape;
    rate_ = entry_rate(rates_, shape, set);
    c_.space.complete_mesh(shape, set, &mesh_, &rule_);
    m_ = num_microbatches(s_.training, mesh_);
    prepared_ = prepare_bounds(shape);
    if (prepared_) {
      dp_.reset(mesh_, s_.model.num_layers, m_, cheapest_layer_times(models_, s_.model.num_layers),
                cheapest_last_extra_s(models_), margin_);
      memos_.reset(s_.model.num_layers);
      later_.clear();  // positions_ changed
      later_count_ = 0;
    }
    return prepared_;
  }

  // Cost models and bound terms of the set's groups; false when the entry's own bounds cut it.
  // value (optional): set to the entry's position bound when it is not cut.
  bool prepare_bounds(const MeshShape& shape, double* value = nullptr) {
    // An entry's bounds cost about an order's bound checks (counted: 2M entries cut here took
    // seconds), and the bound terms of many meshes memory (1,000 offload fractions: 920 MB), so
    // they are kept for kMaxBoundTerms keys at most (terms_ is refilled below). The position
    // bound goes with them: its rows are kept by the terms' addresses, which new terms may reuse.
    work_ += 4;
    if (bound_terms_.size() >= kMaxBoundTerms) {
      bound_terms_.clear();
      positions_.reset();
    }
    models_.clear();
    terms_.clear();
    std::vector<const GroupLayerTimes*>& tv = set_times_;
    std::vector<int>& stages = set_stages_;
    std::vector<int>& caps = set_caps_;
    tv.clear();
    stages.clear();
    caps.clear();
    for (int g : set_->groups) {
      const ClassModels::Found found = c_.models.get(shape, mesh_, g);
      models_.push_back(found.model);
      tv.push_back(found.times);
      stages.push_back(shape.stages_per_group()[g]);
      terms_.push_back(&bound_terms(*found.model, *found.times));  // the cache keeps it in place
      caps.push_back(terms_.back()->max_layers);
    }
    const double set_bound = set_lower_bound_s(tv, stages, s_.model.num_layers, m_, mesh_.vpp, false, &caps);
    const double threshold = within_threshold_s();
    if (set_bound >= 1e300) {
      pruned_.count("stage_memory_bound");
      return false;
    }
    if (set_bound >= threshold) {  // before building the position bound
      pruned_.count(threshold < 1e300 ? "bottleneck_bound" : "stage_memory_bound");
      return false;
    }
    if (positions_) {
      positions_->reset(mesh_.pp, s_.model.num_layers, m_, mesh_.vpp, stages);  // terms_ refilled above
    } else {
      positions_.emplace(terms_, mesh_.pp, s_.model.num_layers, m_, mesh_.vpp, stages);
    }
    std::vector<int>& any = scratch_;
    any.resize(terms_.size());
    for (size_t i = 0; i < any.size(); ++i) any[i] = static_cast<int>(i);
    options_.resize(mesh_.pp);
    for (std::vector<int>& o : options_) o = any;  // keeps each position's buffer
    // Against an incumbent, whether the position bound reaches it is one capacity evaluation
    // (the bound's value needs a bisection); without one, only an infeasible entry is cut.
    bool cut = false;
    if (threshold < 1e300) cut = positions_->reaches(options_, threshold, 0);
    if (!cut && (value || threshold >= 1e300)) {
      const double bound = positions_->lower_bound_s(options_, 0);
      cut = bound >= std::min(threshold, 1e300);
      if (value) *value = bound;
    }
    if (cut) {
      pruned_.count(threshold < 1e300 ? "bottleneck_bound" : "stage_memory_bound");
      return false;
    }
    return true;
  }

  // group_bound_terms depends on the model, on how the mesh shards weights (dp x cp dense,
  // expert_dp experts) and on the optimizer offload: computed once per such key.
  const GroupBoundTerms& bound_terms(const StageCostModel& model, const GroupLayerTimes& times) {
    const BoundKey key{&model, static_cast<long long>(mesh_.dp) * mesh_.cp, mesh_.expert_dp(),
                       mesh_.optimizer_offload_fraction};
    return bound_terms_.get(key, [&] { return group_bound_terms(s_, model, times, mesh_); });
  }

  int index_of(int g) const {
    return static_cast<int>(std::lower_bound(set_->groups.begin(), set_->groups.end(), g) - set_->groups.begin());
  }

  // Every order that starts with `prefix` (its positions hold their groups, later positions any
  // group still to place) reaches the incumbent.
  bool prefix_reaches(const std::vector<int>& prefix, const std::vector<int>& rest) {
    ++work_;
    std::vector<int>& later = scratch_;
    later.clear();
    for (int g : rest) later.push_back(index_of(g));
    for (size_t i = 0; i < options_.size(); ++i) {
      if (i < prefix.size()) options_[i].assign(1, index_of(prefix[i]));
      else options_[i] = later;
    }
    return positions_->reaches(options_, within_threshold_s(), rest.empty() ? -1 : static_cast<int>(prefix.size()));
  }

  // Pushes the DP up to stage `end` (exclusive); false when no split survives. options_ holds
  // the positions' possible groups (set by prefix_reaches for this prefix), which bound how many
  // layers the later stages can hold.
  bool push_until(const std::vector<int>& stage_groups, int end) {
    std::vector<StageLinks>& links = links_;
    stage_links(s_.cluster, mesh_.stage_gpus(), stage_groups, &links, &links_seen_);
    while (dp_.depth() < end) {
      const int i = dp_.depth();
      const LaterStages& later = later_stages(i + 1);
      const StageCostModel* model = models_[index_of(stage_groups[i])];
      if (!dp_.push(*model, links[i], threshold_s(), within_threshold_s(), &counters_, later.layers_fit,
                    &later.rest_floor, memos_.get(i, model, links[i]))) {
        return false;
      }
    }
    return true;
  }

  // What the positions from..pp-1 can hold under options_ (set for the current prefix): the most
  // layers in memory, and the floor of their largest stage time by the layers placed before them.
  // They depend on those positions' options only, which recur across the entry's prefixes (8
  // types: 60,608 pushes, 14,429 distinct), so they are kept per entry by those options.
  struct LaterStages {
    long long layers_fit = 0;
    std::vector<double> rest_floor;
  };
  const LaterStages& later_stages(int from) {
    std::vector<int>& key = later_key_;  // from, then each position's options (runs of equal ones once)
    key.assign(1, from);
    for (int p = from; p < static_cast<int>(options_.size()); ++p) {
      if (p > from && options_[p] == options_[p - 1]) {
        key.push_back(-1);
        continue;
      }
      key.push_back(-2 - static_cast<int>(options_[p].size()));
      key.insert(key.end(), options_[p].begin(), options_[p].end());
    }
    if (later_count_ >= kMaxLaterStages) {  // memory stays bounded
      later_.clear();
      later_count_ = 0;
    }
    return later_.get(key, [&] {
      ++later_count_;
      LaterStages l;
      l.layers_fit = positions_->layers_fit_from(options_, from);
      positions_->least_time_for_layers(options_, from, &floor_);
      l.rest_floor.resize(floor_.size());  // by the layers placed so far
      for (size_t j = 0; j < floor_.size(); ++j) l.rest_floor[j] = floor_[floor_.size() - 1 - j];
      return l;
    });
  }

  // True once this search's order, stage-cost or time budget is spent (recorded in the stats).
  // The entry budget of the build does not end the search of the entries built. The clock is
  // read every 512 calls (a call is one bound, push or split: microseconds; in wasm each read
  // leaves the module, and reading it every 64 calls was 1.3% of a small search there).
  bool over_budget() {
    if (spent_) return true;
    const char* limit = orders_used() >= c_.budget.max_orders                 ? "orders"
                        : counters_.work() >= c_.budget.max_stage_costs      ? "stage_costs"
                        : ++clock_checks_ % 512 == 0 && past_deadline(c_.budget) ? "seconds"
                                                                                 : nullptr;
    if (limit) {
      st_.reached(limit);
      spent_ = true;
    }
    return spent_;
  }

  bool keep(const std::vector<int>& prefix, const std::vector<int>& rest) {
    if (over_budget()) return false;
    if (prefix_reaches(prefix, rest)) {
      pruned_.count("order_bound");
      return false;
    }
    depths_.push_back(dp_.depth());
    if (s_.search.layer_split.empty() && !push_until(prefix, static_cast<int>(prefix.size()) - 1)) {
      leave();
      pruned_.count("order_split_bound");
      return false;
    }
    return true;
  }

  void leave() {
    while (dp_.depth() > depths_.back()) dp_.pop();
    depths_.pop_back();
  }

  bool leaf(const std::vector<int>& stage_groups) {
    if (over_budget()) return false;
    if (++leaves_ % 256 == 0 && tick_) tick_();  // progress (and cancel) inside long walks
    if (st_.cancelled) return false;
    if (prefix_reaches(stage_groups, {})) {
      pruned_.count("order_bound");
      return true;
    }
    ++st_.evaluated;
    const std::vector<int>& fixed = s_.search.layer_split;
    // The order's best split, and its best within the memory margin when that is another (the
    // sink keeps each where it ranks).
    std::optional<SplitResult> split, within;
    if (!fixed.empty()) {
      const SplitProblem p = make_split_problem(s_, mesh_, stage_groups, c_.cache);
      const auto obj = split_objective(p, fixed, &counters_);
      if (obj && *obj < within_threshold_s()) split = SplitResult{fixed, *obj};
    } else {
      const int start_depth = dp_.depth();
      if (push_until(stage_groups, mesh_.pp)) {
        split = dp_.best(threshold_s());
        if (margin_ > 0) within = dp_.best(within_threshold_s(), true);
        if (within && split && within->layers == split->layers) within.reset();
      }
      while (dp_.depth() > start_depth) dp_.pop();
    }
    if (!split && !within) return true;
    const SplitProblem p = make_split_problem(s_, mesh_, stage_groups, c_.cache);
    for (const std::optional<SplitResult>* found : {&split, &within}) {
      if (!*found) continue;
      PlanSpec plan = plan_of(mesh_, s_.cluster, stage_groups, (*found)->layers);
      top_.offer((*found)->objective_s, rate_, plan_key(plan), evaluate_split_problem(s_, p, plan), tag_);
    }
    return true;
  }

  const SearchContext& c_;
  const Scenario& s_;  // c_.s and c_.st, used on most lines
  SearchStats& st_;
  SplitCounters& counters_;
  IncrementalSplit& dp_;
  PlanSink& top_;
  std::function<void()> tick_;
  BilledRates rates_{c_.s.cluster};
  double rate_ = 0;  // USD per hour the entry's plans bill (entry_rate)
  // What a plan of the entry must beat (PlanSink::threshold_s at its rate); one within the memory
  // margin (at least as much: PlanSink::within_threshold_s). The bounds, which know nothing of the
  // margin, cut against the second.
  double threshold_s() const { return std::min(top_.threshold_s(rate_, tag_), guess_s_); }
  double within_threshold_s() const { return std::min(top_.within_threshold_s(rate_, tag_), guess_s_); }
  const double margin_ = c_.s.search.memory_margin_fraction;
  double guess_s_ = 1e300;  // run(): the time the merged DP looks for plans below
  long long tag_ = -1;  // the entry's: the sink keeps its best plan only
  RuleTally pruned_;
  long long leaves_ = 0;
  const GroupSet* set_ = nullptr;
  const MeshShape* shape_ = nullptr;
  bool prepared_ = false;
  Mesh mesh_;
  std::string_view rule_;
  long long m_ = 1;
  long long work_ = 0;  // bound evaluations over orders (4 count as one searched order)
  bool spent_ = false;  // the budget ended this search
  unsigned clock_checks_ = 0;
  std::vector<const StageCostModel*> models_;  // per set group
  std::vector<const GroupBoundTerms*> terms_;  // per set group, in bound_terms_
  // prepare_bounds() scratch, per set group: layer times, stages, most layers in memory.
  std::vector<const GroupLayerTimes*> set_times_;
  std::vector<int> set_stages_, set_caps_;
  std::vector<int> scratch_;  // prepare_bounds() and prefix_reaches() scratch
  struct BoundKey {
    const StageCostModel* model;
    long long dense_shards, expert_shards;
    double offload;
    bool operator==(const BoundKey& o) const {
      return model == o.model && dense_shards == o.dense_shards && expert_shards == o.expert_shards &&
             offload == o.offload;
    }
  };
  struct BoundKeyHash {
    size_t operator()(const BoundKey& k) const {
      return std::hash<const void*>()(k.model) ^ (static_cast<size_t>(k.dense_shards) * 1000003u) ^
             (static_cast<size_t>(k.expert_shards) * 998244353u) ^ std::hash<double>()(k.offload);
    }
  };
  StableMap<BoundKey, GroupBoundTerms, BoundKeyHash> bound_terms_;
  static constexpr size_t kMaxBoundTerms = 16384;
  std::optional<PositionBound> positions_;
  PositionBound::Options options_;
  std::vector<int> depths_;
  std::vector<double> floor_;               // later_stages() scratch
  static constexpr size_t kMaxLaterStages = size_t{1} << 14;
  StableMap<std::vector<int>, LaterStages, IntsHash> later_;  // the entry's, by later_key_
  size_t later_count_ = 0;
  std::vector<int> later_key_;
  StageCostMemos memos_;                    // the entry's stage costs, shared by its orders
  SplitPipeline pipeline_;                  // run_merged's
  StageCostMemo scratch_memo_;              // its costs when memos_ has no room

  OrderDp order_dp_;
  std::vector<StageLinks> links_;           // push_until() scratch
  std::vector<long long> links_seen_;
};

// Entries after the first `done` (in bound order) whose bound is below `threshold`: those a
// search that stopped there left out although they could hold a better plan.
long long entries_below(const SortedEntries& entries, size_t done, double threshold) {
  long long n = 0;
  for (const SearchEntry& e : entries.any_order()) n += e.bound_s < threshold;
  for (size_t i = 0; i < done && i < entries.size(); ++i) n -= entries[i].bound_s < threshold;
  return std::max(0LL, n);
}

// The plans found become the result; baselines and diagnosis beside them.
void finish_result(const Scenario& s, const EntryBuilder& builder, const CandidateSpace& space, StageModelCache& cache,
                   const SplitCounters& counters, PlanSink& top, SearchResult& r) {
  SearchStats& st = r.stats;
  st.stage_costs = counters.stage_costs;
  st.pruned["stage_memory"] += counters.memory;
  st.pruned["split_lower_bound"] += counters.lower_bound;
  st.pruned["dominated_split"] += counters.dominated;
  r.plans = top.take();
  r.pareto = top.take_front();
  r.within_margin = top.take_within();
  if (r.plans.empty()) {
    double shortfall = counters.min_shortfall_bytes;
    const double bound_shortfall = builder.min_shortfall;
    if (shortfall < 0 || (bound_shortfall >= 0 && bound_shortfall < shortfall)) shortfall = bound_shortfall;
    r.diagnosis = diagnose_no_plan(s, shortfall, st);
  } else if (s.search.baselines && s.search.layer_split.empty() && !st.cancelled) {
    const double best_time = r.plans.front().metrics.iteration_time_s;
    const BaselineInputs in{space, builder.sets, builder.entries, cache};
    if (auto u = uniform_baseline(s, in)) r.uniform = baseline_against(*u, best_time);
    if (auto m = megatron_default_baseline(s, in)) r.megatron_default = baseline_against(*m, best_time);
  }
}

}  // namespace

namespace {
// cache and times may come from a search of a scenario that differs in search fields only.
Expected<SearchResult> search_once(const Scenario& s, const SearchControl& control, const SearchBudget& budget,
                                   double prune_above, StageModelCache& cache, LayerTimesCache& times);
}  // namespace

Expected<SearchResult> upstream_search(const Scenario& s, const SearchControl& given_control, const SearchBudget& given) {
  const SearchBudget budget = with_deadline(given);
  double last_progress = 0;
  const SearchControl control = monotone_control(given_control, &last_progress);
  // The searches without and with optimizer offload share their stage cost models and layer
  // times: the scenarios differ only in search fields, which no model reads (cost() takes the
  // offload fraction from the mesh).
  StageModelCache cache(s);
  LayerTimesCache times(s.model.num_layers);
  return search_with_offload_fallback(
      s, control, budget, [&](const Scenario& x, const SearchControl& c, const SearchBudget& b, double above) {
        return search_once(x, c, b, above, cache, times);
      });
}

namespace {
Expected<SearchResult> search_once(const Scenario& s, const SearchControl& control, const SearchBudget& budget,
                                   double prune_above, StageModelCache& cache, LayerTimesCache& times) {
  const auto start = std::chrono::steady_clock::now();
  if (auto e = check_request(s)) return *e;
  SearchResult r;
  SearchStats& st = r.stats;
  const CandidateSpace space(s, &st.pruned, budget.max_combinations, budget.max_shapes);
  if (!space.complete()) {
    st.reached(static_cast<long long>(space.shapes().size()) >= budget.max_shapes ? "shapes" : "combinations");
  }
  ClassModels models(cache, times);
  const SearchContext context{s, space, cache, times, models, budget, st};
  EntryBuilder builder(context);
  // Progress: the build to kBuildShare, then the larger of the entries read and the order and
  // stage-cost budgets used (the budget ends the search, so its use moves with time).
  constexpr double kBuildShare = 0.1;
  builder.build([&](double f) {
    if (control.progress) control.progress(kBuildShare * f, 0);
  });
  const SortedEntries& entries = builder.entries;
  if (control.progress) control.progress(kBuildShare, 0);

  // With a memory margin, the k best plans within it are kept too (SearchResult::within_margin).
  PlanSink top(s, static_cast<size_t>(std::max(1, s.search.top_k)), prune_above, budget.front_seed,
               s.search.memory_margin_fraction, budget.within_prune_above);
  // With prices, each entry's threshold depends on its rate, and the least rate's bounds every
  // entry's (entries are in order of their time bound): an entry below that but at or above its
  // own is skipped, one over the budget too.
  const bool priced = s.cluster.priced();
  const BilledRates rates(s.cluster);
  auto rate_of = [&](const SearchEntry& e) { return entry_rate(rates, space.shapes()[e.shape], builder.sets[e.set]); };
  double least_rate = 0;  // of the entries the objective admits (within the budget)
  if (priced) {
    least_rate = 1e300;
    for (const SearchEntry& e : entries.any_order()) {
      const double rate = rate_of(e);
      if (objective_admits(s.search, rate)) least_rate = std::min(least_rate, rate);
    }
  }
  // What an entry's plans must beat to be kept: within the memory margin, the looser (entry
  // bounds know nothing of the margin).
  auto threshold = [&]() { return top.within_threshold_s(least_rate); };
  SplitCounters counters;
  counters.max_work = budget.max_stage_costs;  // a push stops there too (one may take seconds)
  IncrementalSplit dp;
  size_t next = 0;  // the first entry (in build-bound order) without its position bound
  const EntrySearch* searching = nullptr;
  double last_progress = kBuildShare;
  auto report = [&]() {
    if (!control.progress) return;
    double f = static_cast<double>(next) / std::max<size_t>(1, entries.size());
    if (searching) f = std::max(f, static_cast<double>(searching->orders_used()) / std::max(1LL, budget.max_orders));
    f = std::max(f, static_cast<double>(counters.work()) / std::max(1LL, budget.max_stage_costs));
    last_progress = std::max(last_progress, kBuildShare + (1 - kBuildShare) * std::min(1.0, f));
    control.progress(last_progress, st.evaluated);
  };
  auto tick = [&]() {
    if (control.cancel && control.cancel->load()) st.cancelled = true;
    report();
  };
  EntrySearch entry_search(context, counters, dp, top, tick);
  searching = &entry_search;
  // First guesses: one order of each of the first entries, so that the bounds below have an
  // incumbent before any entry's orders are walked.
  size_t guessed = 0;
  for (; guessed < entries.size() && guessed < kFirstGuesses && entries[guessed].bound_s < threshold(); ++guessed) {
    if (control.cancel && control.cancel->load()) break;
    if (priced && !objective_admits(s.search, rate_of(entries[guessed]))) continue;
    entry_search.run_first_guess(space.shapes()[entries[guessed].shape], builder.sets[entries[guessed].set],
                                 static_cast<long long>(guessed));
  }
  // Entries are searched in order of their position bound (EntrySearch::bound_of), which is far
  // tighter than the build's: computed for the entries in build-bound order as long as the
  // build's bound of the next is below the least position bound known, so the entry searched is
  // always one of least position bound (a best-first search on the tighter bound).
  struct Ready {
    double bound;
    size_t index;
  };
  const auto later = [](const Ready& a, const Ready& b) { return a.bound != b.bound ? a.bound > b.bound : a.index > b.index; };
  std::vector<Ready> ready;  // a min-heap
  long long rounds = 0;
  auto entry_rate_of = [&](size_t i) { return priced ? rate_of(entries[i]) : 0.0; };
  while (!st.cancelled && !entry_search.spent()) {
    if (control.cancel && control.cancel->load()) {
      st.cancelled = true;
      break;
    }
    if (++rounds % 64 == 0) report();
    // Without a plan yet (or after kMaxBoundsAhead bounds in a row), the best entry with its
    // bound known is searched first: its plan cuts the bounds still to compute, which otherwise
    // may take the whole budget (1,000 offload fractions: 14,000 entries before the first that
    // fits in memory, whose bound is 4 times the least build bound).
    long long ahead = 0;
    while (next < entries.size() && (ready.empty() || (entries[next].bound_s < ready.front().bound &&
                                                       top.threshold_s(least_rate) < 1e300 && ahead < kMaxBoundsAhead))) {
      const SearchEntry& e = entries[next];
      const double rate = entry_rate_of(next);
      if (priced && !objective_admits(s.search, rate)) {  // skipped before the bound (no admitted rate bounds it)
        ++st.pruned["over_budget"];
        ++next;
        continue;
      }
      if (e.bound_s >= threshold()) {  // entries are sorted by bound: none after this can win
        st.pruned["entry_lower_bound"] += static_cast<long long>(entries.size() - next);
        next = entries.size();
        break;
      }
      if (priced && e.bound_s >= top.within_threshold_s(rate)) {
        ++st.pruned["entry_lower_bound"];
      } else {
        const double bound = entry_search.bound_of(space.shapes()[e.shape], builder.sets[e.set]);
        ++ahead;
        if (entry_search.spent()) break;
        if (bound < top.within_threshold_s(rate)) {
          ready.push_back({bound, next});
          std::push_heap(ready.begin(), ready.end(), later);
        }
      }
      ++next;
    }
    if (ready.empty() || entry_search.spent()) break;
    std::pop_heap(ready.begin(), ready.end(), later);
    const Ready r = ready.back();
    ready.pop_back();
    if (r.bound >= top.within_threshold_s(entry_rate_of(r.index))) {
      ++st.pruned["bottleneck_bound"];
      continue;
    }
    const SearchEntry& e = entries[r.index];
    if (!entry_search.run(space.shapes()[e.shape], builder.sets[e.set], r.index < guessed,
                          static_cast<long long>(r.index), r.bound) ||
        st.cancelled) {
      break;
    }
  }
  if (entry_search.spent()) {
    st.entries_unsearched = entries_below(entries, next, threshold());
    for (const Ready& r : ready) st.entries_unsearched += r.bound < threshold();
  }
  if (control.progress) control.progress(1.0, st.evaluated);
  entry_search.add_counts_to(&st.pruned);
  st.work = {space.combinations(), static_cast<long long>(space.shapes().size()), builder.walked,
             static_cast<long long>(entries.size()), entry_search.orders_used(), counters.work()};
  finish_result(s, builder, space, cache, counters, top, r);
  st.elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace

}  // namespace hapmoe
