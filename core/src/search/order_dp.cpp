#include "search/order_dp.hpp"

#include <algorithm>
#include <limits>

namespace hapmoe {

long long OrderDp::node_count(const std::vector<Class>& classes) {
  long long sets = 1;
  for (const Class& c : classes) {
    sets *= static_cast<long long>(c.groups.size()) + 1;
    if (sets > (1LL << 40)) return 1LL << 62;
  }
  const long long n = static_cast<long long>(classes.size());
  return sets * n * (n + 1);
}

int OrderDp::new_table(int depth) {
  if (used_ == tables_.size()) tables_.emplace_back();
  pipeline_->clear(&tables_[used_]);
  if (table_depth_.size() < tables_.size()) table_depth_.resize(tables_.size());
  table_depth_[used_] = depth;
  return static_cast<int>(used_++);
}

void OrderDp::trim(int table, int beam) {
  const int depth = table_depth_[table];
  for (int j = 0; j < static_cast<int>(tables_[table].size()); ++j) {
    std::vector<SplitLabel>& labels = tables_[table][j];
    if (static_cast<int>(labels.size()) <= beam) continue;
    std::stable_sort(labels.begin(), labels.end(), [&](const SplitLabel& a, const SplitLabel& b) {
      return pipeline_->bound(a, depth, j) < pipeline_->bound(b, depth, j);
    });
    labels.resize(static_cast<size_t>(beam));
  }
}

int OrderDp::order_of(int parent, int cls) {
  const long long key = static_cast<long long>(parent) * 4096 + cls;
  const auto [it, added] = order_ids_.emplace(key, static_cast<int>(orders_.size()));
  if (added) orders_.push_back({parent, cls});
  return it->second;
}

long long OrderDp::key_of(const std::vector<int>& placed, int prev, int last) const {
  const std::vector<Class>& classes = *classes_;
  const long long n = static_cast<long long>(classes.size());
  long long key = 0;
  for (size_t c = 0; c < classes.size(); ++c) key = key * (static_cast<long long>(classes[c].groups.size()) + 1) + placed[c];
  return (key * (n + 1) + prev + 1) * n + last;
}

OrderDp::Node& OrderDp::node(Level& level, std::unordered_map<long long, int>& index, const std::vector<int>& placed,
                             int prev, int last, int table) {
  const auto [it, added] = index.emplace(key_of(placed, prev, last), static_cast<int>(level.size()));
  if (added) level.push_back(Node{placed, prev, last, table >= 0 ? table : new_table(depth_of(placed) - 1)});
  return level[it->second];
}

int OrderDp::depth_of(const std::vector<int>& placed) const {
  int d = 0;
  for (size_t c = 0; c < placed.size(); ++c) d += placed[c] * (*classes_)[c].stages;
  return d;
}

// The group of the last block of class c placed in `placed` (back = 1), or of the one before it
// (back = 2, when the last two blocks are both of class c).
int OrderDp::group_of(const std::vector<int>& placed, int c, int back) const {
  return (*classes_)[c].groups[placed[c] - back];
}

std::optional<Link> OrderDp::pending_prev(const std::vector<int>& placed, int prev, int last) const {
  const int s = (*classes_)[last].stages;
  const int g = group_of(placed, last, 1);
  if (s > 1) return calls_->link(g, s - 2, g, s - 1);
  if (prev < 0) return std::nullopt;
  const int gp = group_of(placed, prev, prev == last ? 2 : 1);
  return calls_->link(gp, (*classes_)[prev].stages - 1, g, 0);
}

OrderDp::Step OrderDp::pending_step(const std::vector<int>& placed, int prev, int last, int c2) const {
  Step st{depth_of(placed) - 1, group_of(placed, last, 1), {}};
  st.links.prev = pending_prev(placed, prev, last);
  if (c2 >= 0) {
    const int g2 = (*classes_)[c2].groups[placed[c2]];
    st.links.next = calls_->link(st.group, (*classes_)[last].stages - 1, g2, 0);
  }
  return st;
}

OrderDp::Step OrderDp::first_step(const std::vector<int>& placed, int after, int c2) const {
  const int s2 = (*classes_)[c2].stages;
  Step st{depth_of(placed) - s2, group_of(placed, c2, 1), {}};
  const int gp = group_of(placed, after, after == c2 ? 2 : 1);
  st.links.prev = calls_->link(gp, (*classes_)[after].stages - 1, st.group, 0);
  st.links.next = calls_->link(st.group, 0, st.group, 1);
  return st;
}

OrderDp::Step OrderDp::inner_step(const std::vector<int>& placed, int c2, int l) const {
  const int s2 = (*classes_)[c2].stages;
  Step st{depth_of(placed) - s2 + l, group_of(placed, c2, 1), {}};
  st.links.prev = calls_->link(st.group, l - 1, st.group, l);
  st.links.next = calls_->link(st.group, l, st.group, l + 1);
  return st;
}

OrderDp::Step OrderDp::start_step(int c, int l) const {
  Step st{l, (*classes_)[c].groups[0], {}};
  if (l > 0) st.links.prev = calls_->link(st.group, l - 1, st.group, l);
  st.links.next = calls_->link(st.group, l, st.group, l + 1);
  return st;
}

// The least j from which `step`, holding [j, e) for some e >= target (and at least min_n layers),
// fits under the cap: its time only grows with its range, so ranges ending at target fit for j
// from some j* up (found by bisection); when even [target - min_n, target) does not, the first
// later j whose min_n layers fit. L + 1 when none does.
int OrderDp::need_before(const Step& step, int target) const {
  const int L = pipeline_->num_layers();
  if (target > L) return L + 1;
  auto fits = [&](int j, int n) { return calls_->time(step.stage, step.group, step.links, j, n) <= cap_s_; };
  const int lo = step.stage * min_n_;
  int hi = target - min_n_;  // the largest j ending at target
  if (hi >= lo && fits(hi, target - hi)) {
    int a = lo, b = hi;  // fits(b, target - b); find the least such
    while (a < b) {
      const int mid = a + (b - a) / 2;
      if (fits(mid, target - mid)) b = mid; else a = mid + 1;
    }
    return a;
  }
  for (int j = std::max(lo, hi + 1); j + min_n_ <= L; ++j) {
    if (fits(j, min_n_)) return j;
  }
  return L + 1;
}

int OrderDp::need_inner(const std::vector<int>& placed, int c2, int from_l) {
  const int s2 = (*classes_)[c2].stages;
  int need = need_node(placed, -1, c2);
  for (int l = s2 - 2; l >= from_l; --l) need = need_before(inner_step(placed, c2, l), need);
  return need;
}

int OrderDp::need_block(const std::vector<int>& placed, int after, int c2) {
  if ((*classes_)[c2].stages == 1) return need_node(placed, after, c2);
  return need_before(first_step(placed, after, c2), need_inner(placed, c2, 1));
}

int OrderDp::need_node(const std::vector<int>& placed, int prev, int last) {
  if ((*classes_)[last].stages > 1) prev = -1;  // the pending stage's prev link is inside its block
  const size_t key = static_cast<size_t>(key_of(placed, prev, last));
  if (need_gen_[key] == need_run_) return need_[key];
  const int L = pipeline_->num_layers();
  int placed_groups = 0;
  for (int x : placed) placed_groups += x;
  int need = L + 1;
  if (placed_groups == total_) {
    need = need_before(pending_step(placed, prev, last, -1), L);
  } else {
    // The next node's counts, in this depth's scratch (a deeper call uses its own; run() sized
    // them, so none moves while a shallower call holds its own).
    std::vector<int>& next = need_scratch_[static_cast<size_t>(placed_groups)];
    next = placed;
    for (size_t c2 = 0; c2 < placed.size(); ++c2) {
      if (placed[c2] == static_cast<int>((*classes_)[c2].groups.size())) continue;
      const Step step = pending_step(placed, prev, last, static_cast<int>(c2));
      ++next[c2];
      need = std::min(need, need_before(step, need_block(next, last, static_cast<int>(c2))));
      --next[c2];
    }
  }
  need_gen_[key] = need_run_;
  need_[key] = need;
  return need;
}

bool OrderDp::run(const std::vector<Class>& classes, const SplitPipeline& pipeline, const Calls& calls, double cap_s,
                  int beam) {
  classes_ = &classes;
  pipeline_ = &pipeline;
  calls_ = &calls;
  cap_s_ = cap_s;
  min_n_ = pipeline.min_layers();
  used_ = 0;
  orders_.assign(1, {-1, -1});
  order_ids_.clear();
  // need_node's results by key (below node_count), known when stamped with this run.
  const size_t nodes = static_cast<size_t>(node_count(classes));
  if (need_.size() < nodes) {
    need_.resize(nodes);
    need_gen_.resize(nodes, 0);
  }
  if (++need_run_ == 0) {  // wrapped: no key may look known
    std::fill(need_gen_.begin(), need_gen_.end(), 0);
    need_run_ = 1;
  }
  const int n = static_cast<int>(classes.size());
  total_ = 0;
  for (const Class& c : classes) total_ += static_cast<int>(c.groups.size());
  if (need_scratch_.size() < static_cast<size_t>(total_) + 1) need_scratch_.resize(static_cast<size_t>(total_) + 1);
  const int L = pipeline.num_layers();

  // The backward pass: whether any first block can start at layer 0.
  infeasible_ = true;
  std::vector<int> start_need(static_cast<size_t>(n), L + 1);
  for (int c = 0; c < n; ++c) {
    std::vector<int> placed(static_cast<size_t>(n), 0);
    placed[c] = 1;
    int need = need_node(placed, -1, c);
    for (int l = classes[c].stages - 2; l >= 0; --l) need = need_before(start_step(c, l), need);
    start_need[c] = need;
    if (need <= 0) infeasible_ = false;
  }
  if (infeasible_ || calls.stopped()) return !calls.stopped();

  std::vector<std::vector<int>>& later = later_;
  later.resize(static_cast<size_t>(pipeline.pp()));
  std::vector<int>& rest = rest_;
  // Positions after `from`: the rest of the block on `group` (stages_left of them), then every
  // group not in `placed`.
  auto fill_later = [&](int from, int group, int stages_left, const std::vector<int>& placed) {
    rest.clear();
    for (int c = 0; c < n; ++c) {
      for (size_t t = static_cast<size_t>(placed[c]); t < classes[c].groups.size(); ++t) rest.push_back(classes[c].groups[t]);
    }
    std::sort(rest.begin(), rest.end());
    for (int p = from + 1; p < pipeline.pp(); ++p) {
      if (p <= from + stages_left) later[p].assign(1, group);
      else later[p] = rest;
    }
  };
  auto push = [&](const Step& step, int block_left, const std::vector<int>& placed, int min_reach, int from, int to) {
    fill_later(step.stage, step.group, block_left, placed);
    calls.push(step.stage, step.group, step.links, later, min_reach, tables_[from], from, &tables_[to]);
    return !calls.stopped();
  };

  // Level 1: each class's first block, all but its last stage pushed.
  Level level;
  std::unordered_map<long long, int> index;
  for (int c = 0; c < n; ++c) {
    if (start_need[c] > 0) continue;
    std::vector<int> placed(static_cast<size_t>(n), 0);
    placed[c] = 1;
    const int s = classes[c].stages;
    int table = new_table(0);
    tables_[table][0].push_back({0, 0, 0, -1, -1, -1, order_of(0, c)});
    for (int l = 0; l + 1 < s; ++l) {
      int reach = need_node(placed, -1, c);
      for (int k = s - 2; k > l; --k) reach = need_before(start_step(c, k), reach);
      const int to = new_table(l + 1);
      if (!push(start_step(c, l), s - 1 - l, placed, reach, table, to)) return false;
      table = to;
    }
    node(level, index, placed, -1, c, table);
  }
  for (int k = 1; k < total_; ++k) {
    Level next_level;
    std::unordered_map<long long, int> next_index;
    for (const Node& x : level) {
      for (int c2 = 0; c2 < n; ++c2) {
        if (x.placed[c2] == static_cast<int>(classes[c2].groups.size())) continue;
        std::vector<int> placed = x.placed;
        ++placed[c2];
        const int reach = need_block(placed, x.last, c2);
        if (reach > L) continue;  // nothing after this order prefix fits
        const int to = node(next_level, next_index, placed, x.last, c2).table;
        if (!push(pending_step(x.placed, x.prev, x.last, c2), 0, x.placed, reach, x.table, to)) return false;
      }
    }
    // The new nodes' labels belong to their orders extended by the new block.
    for (Node& e : next_level) {
      if (beam > 0) trim(e.table, beam);
      for (auto& labels : tables_[e.table]) {
        for (SplitLabel& lab : labels) lab.prefix = order_of(lab.prefix, e.last);
      }
    }
    // Blocks of more than one stage: push all but the last stage, merging over the class before.
    level.clear();
    index.clear();
    std::unordered_map<long long, int> merged_index;
    Level merged;
    for (const Node& e : next_level) {
      const int c2 = e.last, s2 = classes[c2].stages;
      if (s2 == 1) {  // its one stage is the pending one: e is a node of the next level
        node(level, index, e.placed, e.prev, c2, e.table);
        continue;
      }
      const Step step = first_step(e.placed, e.prev, c2);
      const int to = node(merged, merged_index, e.placed, -1, c2).table;
      table_depth_[to] = step.stage + 1;  // after the block's first stage
      if (!push(step, s2 - 1, e.placed, need_inner(e.placed, c2, 1), e.table, to)) return false;
    }
    for (const Node& f : merged) {
      const int c2 = f.last, s2 = classes[c2].stages;
      int table = f.table;
      for (int l = 1; l + 1 < s2; ++l) {
        const Step step = inner_step(f.placed, c2, l);
        const int to = new_table(step.stage + 1);
        if (!push(step, s2 - 1 - l, f.placed, need_inner(f.placed, c2, l + 1), table, to)) return false;
        table = to;
      }
      node(level, index, f.placed, -1, c2, table);
    }
  }
  // The last stage of the pipeline, from every complete node.
  const int fin = new_table(pipeline.pp());
  for (const Node& x : level) {
    if (!push(pending_step(x.placed, x.prev, x.last, -1), 0, x.placed, L, x.table, fin)) return false;
  }
  offer_best(tables_[fin]);
  return true;
}

void OrderDp::offer_best(const SplitTable& final_table) {
  const SplitPipeline& pipeline = *pipeline_;
  const std::vector<SplitLabel>& labels = final_table[pipeline.num_layers()];
  // The first of least objective (deterministic), of all and of those within the margin.
  int best = -1, best_within = -1;
  double best_obj = calls_->incumbent_s();
  double within_obj = calls_->within_incumbent_s ? calls_->within_incumbent_s() : best_obj;
  for (int li = 0; li < static_cast<int>(labels.size()); ++li) {
    const double obj = pipeline.objective(labels[li]);
    if (obj < best_obj) {
      best_obj = obj;
      best = li;
    }
    if (labels[li].within && obj < within_obj) {
      within_obj = obj;
      best_within = li;
    }
  }
  if (best >= 0) offer_label(labels, best, best_obj);
  if (best_within >= 0 && best_within != best) offer_label(labels, best_within, within_obj);
}

void OrderDp::offer_label(const std::vector<SplitLabel>& labels, int best, double best_obj) {
  const std::vector<Class>& classes = *classes_;
  const SplitPipeline& pipeline = *pipeline_;
  std::vector<int> blocks;
  for (int o = labels[best].prefix; o > 0; o = orders_[o].first) blocks.push_back(orders_[o].second);
  std::reverse(blocks.begin(), blocks.end());
  std::vector<int> stage_groups;
  std::vector<int> taken(classes.size(), 0);
  for (int c : blocks) stage_groups.insert(stage_groups.end(), classes[c].stages, classes[c].groups[taken[c]++]);
  std::vector<int> layers(static_cast<size_t>(pipeline.pp()), 0);
  const SplitLabel* lab = &labels[best];
  int j = pipeline.num_layers();
  for (int i = pipeline.pp() - 1; i >= 0; --i) {
    layers[i] = j - lab->prev_layers;
    if (i == 0) break;
    const int t = lab->prev_table, li = lab->prev_label;
    j = lab->prev_layers;
    lab = &tables_[t][j][li];
  }
  calls_->offer(stage_groups, layers, best_obj);
}

}  // namespace hapmoe
