#include "hapmoe/timeline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "hapmoe/schedule.hpp"

// How the schedule meets the cost model. Megatron's op order run as soon as possible (each op
// starts when its stage is free and its input has arrived) ends at the closed form exactly for
// balanced stages; with unbalanced stages it ends earlier for 1F1B (warm-up forwards hide part of
// the fill) and, for some interleaved inputs, later. The closed form charges every stage the
// bottleneck's pace in the steady state, which the search optimises exactly. The schedule drawn is
// the one in which each stage waits, after each steady-state round, a share `pacing_share` of its
// slack to the bottleneck round (max_c - c_i) / vpp; the share is found by regula falsi (the end
// time grows continuously and monotonically with it) so the pipeline ends at the closed form.
// If even no waiting ends later than the closed form, the as-soon-as-possible schedule is kept
// and matches_cost_model is false.

namespace hapmoe {

std::vector<OrderedOp> megatron_op_order(int rank, int pp, long long num_microbatches, int vpp) {
  const long long m = num_microbatches, p = pp, v = vpp;
  std::vector<OrderedOp> fwd, bwd;
  const long long rounds = (m + p - 1) / p * p * v;
  for (long long k = 0; k < rounds; ++k) {
    const long long mb = k / (p * v) * p + k % p;
    if (mb >= m) continue;
    const int chunk = static_cast<int>(k / p % v);
    fwd.push_back({OpKind::kForward, chunk, mb});
    bwd.push_back({OpKind::kBackward, vpp - 1 - chunk, mb});
  }
  const long long total = static_cast<long long>(fwd.size());
  const long long warm = std::min(total, v == 1 ? p - rank - 1 : (p - rank - 1) * 2 + (v - 1) * p);
  std::vector<OrderedOp> order(fwd.begin(), fwd.begin() + warm);
  for (long long i = 0; i < total - warm; ++i) {
    order.push_back(fwd[warm + i]);
    order.push_back(bwd[i]);
  }
  order.insert(order.end(), bwd.end() - warm, bwd.end());
  return order;
}

namespace {

constexpr double kNotYet = std::numeric_limits<double>::quiet_NaN();

struct Problem {
  int p = 0, v = 1;
  long long m = 0;
  std::vector<std::vector<OrderedOp>> orders;
  std::vector<long long> warm;           // warm-up ops per stage (steady rounds follow them)
  std::vector<double> f_chunk, b_chunk;  // per chunk op
  std::vector<double> cf_chunk, cb_chunk;
  std::vector<double> slack_chunk;       // (max_c - c_i) / vpp
};

// Runs the schedule with the given pacing share; returns the end of the last op (NaN if an
// order could not complete, which Megatron's order never does).
double simulate(const Problem& x, double share, std::vector<TimelineOp>* out) {
  const long long nv = static_cast<long long>(x.p) * x.v;
  std::vector<double> f_end(nv * x.m, kNotYet), b_end(nv * x.m, kNotYet);
  std::vector<size_t> next(x.p, 0);
  std::vector<double> free_at(x.p, 0);
  std::vector<std::vector<TimelineOp>> per_stage(out ? x.p : 0);
  double end_max = 0;
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < x.p; ++r) {
      const auto& order = x.orders[r];
      while (next[r] < order.size()) {
        const OrderedOp& op = order[next[r]];
        const long long vs = static_cast<long long>(op.chunk) * x.p + r;
        const bool fwd = op.kind == OpKind::kForward;
        double dep = 0;
        if (fwd) dep = vs == 0 ? 0 : f_end[(vs - 1) * x.m + op.microbatch];
        else dep = vs == nv - 1 ? f_end[vs * x.m + op.microbatch] : b_end[(vs + 1) * x.m + op.microbatch];
        if (std::isnan(dep)) break;
        const double start = std::max(free_at[r], dep);
        const double end = start + (fwd ? x.f_chunk[r] : x.b_chunk[r]);
        (fwd ? f_end : b_end)[vs * x.m + op.microbatch] = end;
        const long long k = static_cast<long long>(next[r]);
        const bool steady = k >= x.warm[r] && k < static_cast<long long>(order.size()) - x.warm[r];
        free_at[r] = end + (steady && !fwd ? share * x.slack_chunk[r] : 0);
        end_max = std::max(end_max, end);
        if (out) per_stage[r].push_back({r, op.kind, op.chunk, op.microbatch, start, end, fwd ? x.cf_chunk[r] : x.cb_chunk[r]});
        ++next[r];
        progress = true;
      }
    }
  }
  for (int r = 0; r < x.p; ++r) {
    if (next[r] < x.orders[r].size()) return kNotYet;
  }
  if (out) {
    for (auto& s : per_stage) out->insert(out->end(), s.begin(), s.end());
  }
  return end_max;
}

Problem make_problem(const std::vector<StageDurations>& stages, long long m, int vpp) {
  Problem x;
  x.p = static_cast<int>(stages.size());
  x.v = vpp;
  x.m = m;
  double max_c = 0;
  for (const auto& s : stages) max_c = std::max(max_c, s.forward_s + s.backward_s);
  for (int r = 0; r < x.p; ++r) {
    const StageDurations& s = stages[r];
    x.orders.push_back(megatron_op_order(r, x.p, m, vpp));
    const long long total = m * vpp;
    x.warm.push_back(std::min(total, vpp == 1 ? x.p - r - 1LL : (x.p - r - 1LL) * 2 + (vpp - 1LL) * x.p));
    x.f_chunk.push_back(s.forward_s / vpp);
    x.b_chunk.push_back(s.backward_s / vpp);
    x.cf_chunk.push_back(s.comm_forward_s / vpp);
    x.cb_chunk.push_back(s.comm_backward_s / vpp);
    x.slack_chunk.push_back((max_c - (s.forward_s + s.backward_s)) / vpp);
  }
  return x;
}

// The pacing share whose schedule ends at target: the end time is continuous, nondecreasing and
// piecewise linear in the share, so regula falsi (Illinois variant) converges in a few runs.
double pacing_share_for(const Problem& x, double target, double tol, double end_at_zero) {
  double lo = 0, f_lo = end_at_zero - target, hi = 1, f_hi = simulate(x, hi, nullptr) - target;
  while (f_hi < -tol && hi < 1e6) {
    lo = hi;
    f_lo = f_hi;
    hi *= 2;
    f_hi = simulate(x, hi, nullptr) - target;
  }
  if (f_hi < -tol) return hi;  // no slack to wait on: cannot happen when target > end_at_zero
  int side = 0;
  for (int i = 0; i < 100 && hi - lo > 1e-15 * hi; ++i) {
    const double mid = (lo * f_hi - hi * f_lo) / (f_hi - f_lo);
    const double f_mid = simulate(x, mid, nullptr) - target;
    if (std::abs(f_mid) <= tol) return mid;
    if (f_mid < 0) {
      lo = mid, f_lo = f_mid;
      if (side == -1) f_hi /= 2;
      side = -1;
    } else {
      hi = mid, f_hi = f_mid;
      if (side == 1) f_lo /= 2;
      side = 1;
    }
  }
  return hi;
}

}  // namespace

Timeline build_timeline(const std::vector<StageDurations>& stages, long long num_microbatches, int vpp) {
  Timeline t;
  if (stages.empty() || num_microbatches < 1 || vpp < 1) return t;
  const Problem x = make_problem(stages, num_microbatches, vpp);
  std::vector<double> c, tail;
  for (const auto& s : stages) {
    c.push_back(s.forward_s + s.backward_s);
    tail.push_back(s.dp_s + s.optimizer_s);
  }
  const PipelineTime model = pipeline_time(c, tail, num_microbatches, vpp);
  const double target = model.pipeline_s;
  const double tol = 1e-13 * std::max(target, 1e-300);
  double share = 0;
  const double asap = simulate(x, 0, nullptr);
  if (std::isnan(asap) || asap > target + tol) {
    t.matches_cost_model = false;
  } else if (asap < target - tol) {
    share = pacing_share_for(x, target, tol, asap);
  }
  t.pacing_share = share;
  t.pipeline_s = simulate(x, share, &t.ops);
  t.matches_cost_model = t.matches_cost_model && std::abs(t.pipeline_s - target) <= 1e-9 * target;
  t.iteration_s = t.pipeline_s + model.tail_s;
  double busy = 0;
  for (const auto& op : t.ops) busy += op.end_s - op.start_s;
  if (t.pipeline_s > 0) t.bubble_fraction = std::max(0.0, 1 - busy / (x.p * t.pipeline_s));
  return t;
}

}  // namespace hapmoe
