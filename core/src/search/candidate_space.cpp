#include "search/candidate_space.hpp"
#include "search/stack_choices.hpp"

#include <unordered_map>

#include "spec/recompute.hpp"
#include "spec/stable_map.hpp"
#include "evaluate/rules.hpp"
#include "evaluate/stack_rules.hpp"

namespace hapmoe {

namespace {

std::vector<int> powers_of_two_up_to(int limit) {
  std::vector<int> v;
  for (int x = 1; x <= limit; x *= 2) v.push_back(x);
  return v;
}

std::vector<int> or_default(const std::vector<int>& given, std::vector<int> fallback) {
  return given.empty() ? fallback : given;
}

// Default CP sizes: 1, and 2, 4, 8 while each CP rank keeps >= 2048 tokens of the sequence.
std::vector<int> default_cps(int seq_length) {
  std::vector<int> v{1};
  for (int x = 2; x <= 8; x *= 2) {
    if (seq_length / x >= 2048) v.push_back(x);
  }
  return v;
}

// Default EP sizes: the powers of two that divide num_experts.
std::vector<int> default_eps(const ModelSpec& m) {
  std::vector<int> v{1};
  for (int x = 2; x <= m.num_experts; x *= 2) {
    if (m.num_experts % x == 0) v.push_back(x);
  }
  return v;
}

}  // namespace

CandidateSpace::CandidateSpace(const Scenario& s, PruneCounts* pruned, long long max_combinations, long long max_shapes)
    : s_(s) {
  const RuleNamesOnly names;  // rejections are counted by rule name
  RuleTally cuts;  // group and shape rejections (the page's first plan checks 12,000 combinations)
  const ClusterSpec& c = s.cluster;
  const SearchSpec& sp = s.search;
  const int num_groups = static_cast<int>(c.groups.size());
  // Classes of identical groups (complete effective spec and shape, never the preset id).
  class_of_.assign(num_groups, -1);
  for (int g = 0; g < num_groups; ++g) {
    if (class_of_[g] >= 0) continue;
    class_of_[g] = static_cast<int>(class_groups_.size());
    class_groups_.push_back({g});
    for (int h = g + 1; h < num_groups; ++h) {
      if (class_of_[h] < 0 && c.groups[h] == c.groups[g]) {
        class_of_[h] = class_of_[g];
        class_groups_.back().push_back(h);
      }
    }
  }
  long long max_gpn = 0, max_group = 0;
  for (const auto& g : c.groups) {
    max_gpn = std::max<long long>(max_gpn, g.gpus_per_node);
    max_group = std::max<long long>(max_group, g.gpus());
  }
  const std::vector<int> tps = or_default(sp.tp, powers_of_two_up_to(static_cast<int>(std::min<long long>(max_gpn, 64))));
  const std::vector<int> cps = or_default(sp.cp, default_cps(s.training.seq_length));
  const std::vector<int> eps = or_default(sp.ep, default_eps(s.model));
  const std::vector<int> mbss = or_default(sp.micro_batch_size, {1, 2});
  const std::vector<int> vpps = or_default(sp.vpp, {1, 2, 4});
  const std::vector<Recompute> rcs = sp.recompute.empty() ? default_recompute_choices(s.model) : sp.recompute;
  // EP overlap: the listed values, or (unset) on wherever Megatron allows it: it only hides time.
  const bool overlap_auto = sp.ep_comm_overlap.empty();
  const std::vector<bool> overlaps = overlap_auto ? std::vector<bool>{true} : sp.ep_comm_overlap;
  // Offload: the listed fractions, or (unset) none; upstream_search retries with
  // kOffloadFallbackFractions when nothing fits without.
  const std::vector<double> offloads =
      sp.optimizer_offload_fraction.empty() ? std::vector<double>{0} : sp.optimizer_offload_fraction;
  // The software stacks (stack_choices.hpp): dispatcher x CUDA graphs.
  std::vector<std::pair<Dispatch, CudaGraphs>> stacks;
  for (Dispatch d : dispatch_choices(s)) {
    for (const CudaGraphs& g : graph_choices(s, d)) stacks.push_back({d, g});
  }
  // Counts one combination looked at (a (tp, cp, dp) base, or a full shape); false once
  // max_combinations are looked at or max_shapes kept: the enumeration then stops there.
  auto count_combination = [&] {
    complete_ = ++combinations_ <= max_combinations && static_cast<long long>(shapes_.size()) < max_shapes;
    return complete_;
  };
  // Past the grid, the shape rules read tp, ep and etp only through tp x ep > 1, ep > 1 and etp > 1,
  // and no other field of the grid (rules_test): their verdicts are kept for the whole space by
  // those three and the (stack, recompute, overlap, offload) indices, one byte each (0 unknown, 1
  // passes, else rule_code(name) + 1). Indexed: a linear look-up made long search lists quadratic
  // (230 ns per combination with 100 offload fractions and 6 recompute choices).
  const size_t keys = stacks.size() * rcs.size() * 2 * (offloads.size() + 1);
  std::vector<unsigned char> past_grid(8 * keys, 0);
  // Shape rules by code (0: passes; the names are literals, fewer than 254 shape rules), and the
  // combinations each cut, added to the tally once.
  std::vector<std::string_view> rule_names{std::string_view()};
  std::vector<long long> cut_by_code{0};
  auto rule_code = [&](const RuleResult& r) {
    if (!r) return 0;
    const auto name = std::find(rule_names.begin() + 1, rule_names.end(), r->rule);
    if (name != rule_names.end()) return static_cast<int>(name - rule_names.begin());
    rule_names.push_back(r->rule);
    cut_by_code.push_back(0);
    return static_cast<int>(rule_names.size() - 1);
  };
  // Model classes of one (tp, cp), by (ep, etp, micro-batch size, stack index, recompute index):
  // dp and vpp, the loops that repeat them, leave the models as they are. Looked up once per
  // shape kept (a table over every combination would be the product of the search lists).
  struct ClassKey {
    int ep, etp, mbs;
    size_t stack, recompute;
    bool operator==(const ClassKey& o) const {
      return ep == o.ep && etp == o.etp && mbs == o.mbs && stack == o.stack && recompute == o.recompute;
    }
  };
  struct ClassKeyHash {
    size_t operator()(const ClassKey& k) const {
      Fnv1a h;
      for (uint64_t v : {static_cast<uint64_t>(static_cast<uint32_t>(k.ep)), static_cast<uint64_t>(static_cast<uint32_t>(k.etp)),
                         static_cast<uint64_t>(static_cast<uint32_t>(k.mbs)), static_cast<uint64_t>(k.stack),
                         static_cast<uint64_t>(k.recompute)}) {
        h.add(v);
      }
      return static_cast<size_t>(h.value());
    }
  };
  std::unordered_map<ClassKey, int, ClassKeyHash> class_of_combo;
  // Room for the shapes the lists can give (tp, cp, dp values x the combinations of one base), up
  // to kReservedShapes: grown one push at a time, the vector's reallocations were 2.4% of the
  // paper's Mixtral-S 32-1 search natively, and in wasm each copy leaves the module.
  {
    long long dps = 0;  // dp values no micro-batch size rules out
    for (long long dp = 1; dp <= max_group && dp <= s.training.global_batch_size; ++dp) dps += s.training.global_batch_size % dp == 0;
    long long room = 1;
    for (size_t n : {tps.size(), cps.size(), static_cast<size_t>(dps), eps.size(), sp.etp.empty() ? size_t{2} : sp.etp.size(),
                     mbss.size(), vpps.size(), stacks.size(), rcs.size(), overlaps.size(), offloads.size()}) {
      room = std::min<long long>(kReservedShapes, room * static_cast<long long>(n));
    }
    shapes_.reserve(static_cast<size_t>(std::min(room, max_shapes)));
  }
  // A lambda, so that the spent enumeration budget ends every loop at once.
  [&] {
    for (int tp : tps) {
      for (int cp : cps) {
        class_of_combo.clear();
        for (long long dp = 1; static_cast<long long>(tp) * cp * dp <= max_group; ++dp) {
          if (s.training.global_batch_size % dp != 0) continue;  // no micro-batch size can divide it
          if (!count_combination()) return;
          Mesh base;
          base.tp = tp;
          base.cp = cp;
          base.dp = static_cast<int>(dp);
          base.pp = 0;
          base.sequence_parallel = tp > 1;
          const long long stage = base.stage_gpus();
          std::vector<int> stages(num_groups, 0);
          bool any = false;
          for (int g = 0; g < num_groups; ++g) {
            if (c.groups[g].gpus() < stage) continue;
            if (auto v = check_group_rules(s, base, g)) {
              cuts.count(v->rule);
              continue;
            }
            stages[g] = static_cast<int>(c.groups[g].gpus() / stage);
            any = true;
          }
          if (!any) continue;
          const std::vector<int> etps_default = tp > 1 && s.model.is_moe() ? std::vector<int>{1, tp} : std::vector<int>{1};
          // Stages per group for each stack: the groups whose GPUs do not run its dispatcher hold
          // none (rule dispatch_supported); nullptr when no group is left.
          std::vector<const std::vector<int>*> stack_stages(stacks.size(), nullptr);
          for (size_t si = 0; si < stacks.size(); ++si) {
            const Dispatch d = stacks[si].first;
            const size_t same = std::find_if(stacks.begin(), stacks.begin() + si, [&](const auto& x) { return x.first == d; }) -
                                stacks.begin();
            if (same < si) {
              stack_stages[si] = stack_stages[same];
              continue;
            }
            std::vector<int> for_d = stages;
            bool left = false;
            for (int g = 0; g < num_groups; ++g) {
              if (for_d[g] > 0 && !dispatch_runs_on(d, c.groups[g])) {
                for_d[g] = 0;
                cuts.count("dispatch_supported");
              }
              left = left || for_d[g] > 0;
            }
            if (!left) continue;
            stage_counts_.push_back(std::make_unique<const std::vector<int>>(std::move(for_d)));
            stack_stages[si] = stage_counts_.back().get();
          }
          // One shape per base, its mesh fields set below for each combination (all of them are).
          MeshShape shape;
          shape.mesh = base;
          int grid_rule = 0;     // check_grid_rules' verdict on the current (ep, etp, micro-batch size)
          size_t grid_flags = 0;  // past_grid's rows of the current (tp, ep, etp)
          // The code of the first shape rule the mesh violates (0: none).
          auto shape_rule = [&](size_t key, const Mesh& m) {
            if (grid_rule != 0) return grid_rule;
            unsigned char& v = past_grid[grid_flags + key];
            if (v == 0) v = static_cast<unsigned char>(1 + rule_code(check_shape_rules_past_grid(s, m)));
            return v - 1;
          };
          for (int ep : eps) {
            for (int etp : or_default(sp.etp, etps_default)) {
              grid_flags = ((static_cast<long long>(tp) * ep > 1 ? 1 : 0) | (ep > 1 ? 2 : 0) | (etp > 1 ? 4 : 0)) * keys;
              for (int mbs : mbss) {
                shape.mesh.ep = ep;
                shape.mesh.etp = etp;
                shape.mesh.micro_batch_size = mbs;
                grid_rule = rule_code(check_grid_rules(s, shape.mesh));
                for (int vpp : vpps) {
                  for (size_t si = 0; si < stacks.size(); ++si) {
                    if (!stack_stages[si]) continue;
                    shape.stages_ = stack_stages[si];
                    for (size_t ri = 0; ri < rcs.size(); ++ri) {
                      int model_class = -1;  // this combination's, once a shape of it is kept
                      for (bool overlap : overlaps) {
                        shape.mesh.vpp = vpp;  // (ep, etp and micro-batch size set above)
                        shape.mesh.recompute = rcs[ri];
                        shape.mesh.ep_comm_overlap = overlap;
                        shape.mesh.dispatch = stacks[si].first;
                        shape.mesh.cuda_graphs = stacks[si].second;
                        shape.mesh.optimizer_offload_fraction = base.optimizer_offload_fraction;  // as a fresh shape
                        const size_t combo = si * rcs.size() + ri;
                        const size_t key = (combo * 2 + (overlap ? 1 : 0)) * (offloads.size() + 1);
                        if (overlap_auto) {
                          shape.ep_overlap_auto = true;
                          shape.mesh.ep_comm_overlap = shape_rule(key + offloads.size(), shape.mesh) == 0;
                        }
                        const size_t checked = (combo * 2 + (shape.mesh.ep_comm_overlap ? 1 : 0)) * (offloads.size() + 1);
                        for (size_t fi = 0; fi < offloads.size(); ++fi) {
                          if (!count_combination()) return;
                          shape.mesh.optimizer_offload_fraction = offloads[fi];
                          if (const int rule = shape_rule(checked + fi, shape.mesh); rule != 0) {
                            ++cut_by_code[rule];
                            continue;
                          }
                          if (model_class < 0) {
                            model_class = class_of_combo.try_emplace(ClassKey{ep, etp, mbs, si, ri}, model_classes_).first->second;
                            if (model_class == model_classes_) ++model_classes_;
                          }
                          shape.model_class = model_class;
                          shapes_.push_back(shape);
                        }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }();
  for (size_t k = 1; k < rule_names.size(); ++k) {
    if (cut_by_code[k] > 0) cuts.count(rule_names[k], cut_by_code[k]);
  }
  cuts.add_to(pruned);
}

long long CandidateSpace::group_set_count(const MeshShape& shape) const {
  constexpr long long kMax = 1LL << 62;
  long long n = 1;  // the odometer's positions, the empty set included
  for (const std::vector<int>& groups : class_groups_) {
    const long long eligible = shape.stages_per_group()[groups.front()] > 0 ? static_cast<long long>(groups.size()) : 0;
    n = n > kMax / (eligible + 1) ? kMax : n * (eligible + 1);
  }
  return n - 1;
}

bool CandidateSpace::next_set(const MeshShape& shape, std::vector<int>& counts) const {
  // Odometer over counts[c] in [0, eligible groups of class c]; skips the empty set.
  for (size_t c = 0; c < counts.size(); ++c) {
    const int eligible = shape.stages_per_group()[class_groups_[c].front()] > 0
                             ? static_cast<int>(class_groups_[c].size())
                             : 0;
    if (counts[c] < eligible) {
      ++counts[c];
      return true;
    }
    counts[c] = 0;
  }
  return false;
}

bool CandidateSpace::walk_sets(const MeshShape& shape, bool from_start, size_t items) const {
  walk_items_.clear();
  walk_groups_.clear();
  walk_whole_ = false;
  const std::vector<int>& allowed_pp = s_.search.pp;
  const int fixed_pp = static_cast<int>(s_.search.layer_split.size());
  std::vector<int>& groups = walk_set_.groups;
  while (walk_items_.size() < items) {
    if (!next_set(shape, walk_counts_)) {
      if (from_start) {
        walk_key_ = shape.stages_per_group();
        walk_whole_ = true;
      }
      return true;
    }
    groups.clear();
    long long pp = 0;
    for (size_t c = 0; c < walk_counts_.size(); ++c) {
      int taken = 0;
      for (int g : class_groups_[c]) {
        if (taken == walk_counts_[c]) break;
        if (shape.stages_per_group()[g] == 0) continue;
        groups.push_back(g);
        pp += shape.stages_per_group()[g];
        ++taken;
      }
    }
    int verdict = -1;
    const bool pp_allowed = allowed_pp.empty() || std::find(allowed_pp.begin(), allowed_pp.end(), pp) != allowed_pp.end();
    if (pp <= s_.model.num_layers && pp_allowed && (fixed_pp == 0 || pp == fixed_pp)) {
      std::sort(groups.begin(), groups.end());
      verdict = group_set_rule(groups);
    }
    walk_items_.push_back({verdict, static_cast<uint32_t>(walk_groups_.size()), static_cast<uint32_t>(groups.size())});
    walk_groups_.insert(walk_groups_.end(), groups.begin(), groups.end());
  }
  return false;
}

int CandidateSpace::group_set_rule(const std::vector<int>& groups) const {
  auto check = [&] {
    const RuleNamesOnly names;  // counted by name
    const RuleResult v = check_group_set_rules(s_, groups);
    if (!v) return 0;
    auto name = std::find(set_rule_names_.begin(), set_rule_names_.end(), v->rule);
    if (name == set_rule_names_.end()) name = set_rule_names_.insert(name, std::string(v->rule));
    return static_cast<int>(name - set_rule_names_.begin());
  };
  if (s_.cluster.groups.size() > 64) return check();
  uint64_t mask = 0;
  for (int g : groups) mask |= uint64_t{1} << g;
  if (s_.cluster.groups.size() <= 16) {
    if (set_rule_flat_.empty()) set_rule_flat_.assign(size_t{1} << s_.cluster.groups.size(), -1);
    int& known = set_rule_flat_[mask];
    if (known < 0) known = check();
    return known;
  }
  auto it = set_rules_.find(mask);
  if (it == set_rules_.end()) it = set_rules_.emplace(mask, check()).first;
  return it->second;
}

Mesh CandidateSpace::mesh_for(const MeshShape& shape, const GroupSet& set) const {
  Mesh m = shape.mesh;
  m.pp = pp_of(shape, set);
  if (shape.ep_overlap_auto) {
    const RuleNamesOnly names;
    if (rule_ep_overlap_vpp(s_, m)) m.ep_comm_overlap = false;  // not allowed at this pp
  }
  return m;
}

int CandidateSpace::pp_of(const MeshShape& shape, const GroupSet& set) {
  int pp = 0;
  for (int g : set.groups) pp += shape.stages_per_group()[g];
  return pp;
}

bool CandidateSpace::complete_mesh(const MeshShape& shape, const GroupSet& set, Mesh* out, std::string_view* rule) const {
  const int pp = pp_of(shape, set);
  const Mesh& x = shape.mesh;
  PipelineVerdict key;
  key.pp = pp;
  key.vpp = x.vpp;
  key.per_step = static_cast<long long>(x.micro_batch_size) * x.dp;
  key.overlap = x.ep_comm_overlap;
  Fnv1a h;
  for (uint64_t v : {static_cast<uint64_t>(key.pp), static_cast<uint64_t>(key.vpp), static_cast<uint64_t>(key.per_step),
                     static_cast<uint64_t>(key.overlap)}) {
    h.add(v);
  }
  if (pipeline_verdicts_.empty()) pipeline_verdicts_.resize(kPipelineVerdicts);
  PipelineVerdict& slot = pipeline_verdicts_[(h.value() ^ h.value() >> 29) % kPipelineVerdicts];
  if (!slot.known || !slot.same_key(key)) {
    slot = key;
    slot.known = true;
    const Mesh m = mesh_for(shape, set);
    slot.overlap_after = m.ep_comm_overlap;
    const RuleNamesOnly names;  // only the rule's name is returned
    const RuleResult v = check_pipeline_rules(s_, m);
    slot.rule = v ? v->rule : std::string_view();
  }
  *out = x;
  out->pp = pp;
  out->ep_comm_overlap = slot.overlap_after;
  if (!slot.rule.empty()) {
    *rule = slot.rule;
    return false;
  }
  return true;
}

}  // namespace hapmoe
