// Communication-time terms: ring collectives, all-to-all split over scale-up / scale-out links,
// pipeline p2p, and the exposed (non-overlapped) share of overlappable communication.
#pragma once

#include "hapmoe/hardware.hpp"

namespace hapmoe {

// (Inline: StageCostModel::cost calls these for every stage the layer-split DP prices.)

// Ring all-gather or reduce-scatter of a `bytes` buffer (the full, gathered size) over n ranks:
// (n-1)/n x bytes / bandwidth + latency. Zero for n <= 1.
inline double ring_collective_time_s(double bytes, long long n, const Link& link) {
  if (n <= 1 || bytes <= 0) return 0;
  return static_cast<double>(n - 1) / static_cast<double>(n) * bytes / link.bytes_per_s() + link.latency_s;
}
// Ring all-reduce = reduce-scatter + all-gather.
inline double all_reduce_time_s(double bytes, long long n, const Link& link) {
  return 2 * ring_collective_time_s(bytes, n, link);
}
// Point-to-point send of `bytes` over a link.
inline double p2p_time_s(double bytes, const Link& link) {
  if (bytes <= 0) return 0;
  return bytes / link.bytes_per_s() + link.latency_s;
}

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

// Expected number of distinct ranks (out of `ranks`) that one token's top-k experts live on,
// experts spread evenly and picked uniformly: ranks x (1 - (1 - 1/ranks)^k).
double expected_distinct_ranks(int ranks, int topk);

// MoE token dispatch traffic of one rank (forward dispatch; combine is the mirror image) for
// `tokens` tokens of `token_bytes` each, top-k routing over an EP group of `ep` ranks of which
// `ep_local` share this rank's node.
// - alltoall (Megatron MoEAlltoAllTokenDispatcher): tokens are permuted per expert first, so
//   every (token, expert) pair whose expert is on another rank is one copy on the wire.
// - flex (DeepEP, HybridEP): a token crosses the scale-out link once per distinct remote node
//   it is routed to, then fans out over the scale-up link to the distinct ranks it needs there;
//   inside the node it goes once per distinct destination rank.
// - allgather: not an all-to-all (see allgather_dispatch_bytes); returns zero traffic.
AlltoallTraffic ep_dispatch_traffic(Dispatch d, double tokens, double token_bytes, int topk,
                                    int ep, int ep_local, int num_groups, int group_topk);
// Megatron MoEAllGatherTokenDispatcher: the hidden states of all `tp_ep` ranks of the TP x EP
// group are all-gathered (forward dispatch) and reduce-scattered (combine); `tokens` is the
// number of tokens one rank holds before the gather. Returns the gathered buffer size in bytes.
double allgather_dispatch_bytes(double tokens, double token_bytes, int tp_ep);

// Exposed part of a communication that can overlap with `window_s` of compute: what does not fit
// in the window, but at least min_fraction of it (the last bucket cannot overlap).
double exposed_after_overlap_s(double comm_s, double window_s, double min_fraction);

}  // namespace hapmoe
