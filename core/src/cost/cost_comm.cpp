#include "cost/cost_comm.hpp"

#include <algorithm>

namespace hapmoe {

double alltoall_time_s(const AlltoallTraffic& t, const Link& scale_up, const Link& scale_out) {
  double time = 0;
  if (t.intra_bytes > 0)
    time = std::max(time, t.intra_bytes / scale_up.bytes_per_s() + scale_up.latency_s);
  if (t.inter_bytes > 0)
    time = std::max(time, t.inter_bytes / scale_out.bytes_per_s() + scale_out.latency_s);
  return time;
}

double expected_distinct_nodes(int nodes, int topk, int num_groups, int group_topk) {
  if (nodes <= 1) return 1;
  double miss = 1;  // (1 - 1/nodes)^topk by repeated multiplication: same bits in every libm
  for (int i = 0; i < topk; ++i) miss *= 1 - 1.0 / nodes;
  double d = nodes * (1 - miss);
  if (num_groups > 0 && group_topk > 0) {
    const double cap = group_topk * std::max(1.0, static_cast<double>(nodes) / num_groups);
    d = std::min(d, cap);
  }
  return d;
}

double expected_distinct_ranks(int ranks, int topk) {
  if (ranks <= 1) return 1;
  double miss = 1;  // (1 - 1/ranks)^topk by repeated multiplication: same bits in every libm
  for (int i = 0; i < topk; ++i) miss *= 1 - 1.0 / ranks;
  return ranks * (1 - miss);
}

AlltoallTraffic ep_dispatch_traffic(Dispatch d, double tokens, double token_bytes, int topk,
                                    int ep, int ep_local, int num_groups, int group_topk) {
  AlltoallTraffic t;
  if (ep <= 1 || d == Dispatch::kAllgather) return t;
  ep_local = std::max(1, std::min(ep_local, ep));
  if (d == Dispatch::kAlltoall) {
    const double pairs = tokens * topk;
    t.intra_bytes = pairs * token_bytes * (ep_local - 1) / ep;
    t.inter_bytes = pairs * token_bytes * (ep - ep_local) / ep;
    return t;
  }
  // flex: dedup per destination rank inside the node and per destination node across nodes.
  const double ranks_hit = expected_distinct_ranks(ep, topk);
  t.intra_bytes = tokens * token_bytes * ranks_hit * (ep_local - 1) / ep;
  if (ep_local < ep) {
    const int nodes = (ep + ep_local - 1) / ep_local;
    const double remote_nodes =
        expected_distinct_nodes(nodes, topk, num_groups, group_topk) * (nodes - 1) / nodes;
    t.inter_bytes = tokens * token_bytes * remote_nodes;
    // Fan-out inside the destination node (symmetric: this rank forwards as much as it gets):
    // of the ranks a token needs on a remote node, all but the receiving one.
    t.intra_bytes +=
        tokens * token_bytes * ranks_hit * (ep - ep_local) / ep * (ep_local - 1) / ep_local;
  }
  return t;
}

double allgather_dispatch_bytes(double tokens, double token_bytes, int tp_ep) {
  return tp_ep <= 1 ? 0 : tokens * token_bytes * tp_ep;
}

double exposed_after_overlap_s(double comm_s, double window_s, double min_fraction) {
  return std::max(comm_s - window_s, comm_s * min_fraction);
}

}  // namespace hapmoe
