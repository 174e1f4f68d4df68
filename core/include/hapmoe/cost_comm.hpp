// Communication-time terms: ring collectives, all-to-all split over scale-up / scale-out links,
// pipeline p2p, and the exposed (non-overlapped) share of overlappable communication.
#pragma once

#include "hapmoe/hardware.hpp"

namespace hapmoe {

// Ring all-gather or reduce-scatter of a `bytes` buffer (the full, gathered size) over n ranks:
// (n-1)/n x bytes / bandwidth + latency. Zero for n <= 1.
double ring_collective_time_s(double bytes, long long n, const Link& link);
// Ring all-reduce = reduce-scatter + all-gather.
double all_reduce_time_s(double bytes, long long n, const Link& link);
// Point-to-point send of `bytes` over a link.
double p2p_time_s(double bytes, const Link& link);

// Bytes one rank sends in an all-to-all, split by link.
struct AlltoallTraffic {
  double intra_bytes = 0;
  double inter_bytes = 0;
};
// All-to-all time: the two links work in parallel, the slower one bounds it.
double alltoall_time_s(const AlltoallTraffic& t, const Link& scale_up, const Link& scale_out);

// Expected number of distinct nodes (out of `nodes`) that one token's top-k experts live on,
// experts spread evenly and picked uniformly: nodes x (1 - (1 - 1/nodes)^k); group-limited
// routing (group_topk of num_groups groups) caps it at group_topk x max(1, nodes/num_groups).
double expected_distinct_nodes(int nodes, int topk, int num_groups, int group_topk);

// MoE token dispatch traffic of one rank for `tokens` tokens of `token_bytes` each, top-k routing
// over an EP group of `ep` ranks of which `ep_local` share this rank's node. Without node_dedup
// every token-expert pair crosses separately; with it (hierarchical / DeepEP-style dispatch) a
// token crosses once per distinct remote node and fans out inside the node.
AlltoallTraffic ep_dispatch_traffic(double tokens, double token_bytes, int topk, int ep,
                                    int ep_local, bool node_dedup, int num_groups,
                                    int group_topk);

// Exposed part of a communication that can overlap with `window_s` of compute: what does not fit
// in the window, but at least min_fraction of it (the last bucket cannot overlap).
double exposed_after_overlap_s(double comm_s, double window_s, double min_fraction);

}  // namespace hapmoe
