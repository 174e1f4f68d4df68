// Measured points of a scenario's `profile` section (docs/scenario.md, "Profile"): per GPU type,
// layer forward/backward times at given (TP, CP, EP, ETP, micro-batch, sequence) and collective
// bus bandwidths by message size and placement. Plain values; profile_lookup.hpp turns them into
// cost terms.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace hapmoe {

enum class LayerKind { kDense, kMoe };
enum class CollectiveOp { kAllReduce, kAllGather, kReduceScatter, kAllToAll };
enum class Placement { kIntraNode, kInterNode, kInterGroup };

// One transformer layer timed on one GPU: compute only (its TP/CP/EP communication excluded,
// e.g. the kernel time of a profiler trace), no recompute, per micro-batch.
struct LayerPoint {
  LayerKind kind = LayerKind::kMoe;
  int tp = 1, cp = 1, ep = 1, etp = 1;
  int micro_batch_size = 1;
  int seq_length = 0;
  double forward_ms = 0, backward_ms = 0;
  double tokens() const { return static_cast<double>(micro_batch_size) * seq_length; }
};

// One nccl-tests row: `bytes` is the test's size column (the full buffer: the gathered size for
// all_gather, the input size for reduce_scatter, the send buffer per rank for all_to_all) and
// busbw_gbps its busbw column (1e9 bytes/s), which folds in the (n-1)/n factors.
struct CollectivePoint {
  CollectiveOp op = CollectiveOp::kAllReduce;
  long long ranks = 2;
  Placement placement = Placement::kIntraNode;
  double bytes = 0;
  double busbw_gbps = 0;
};

struct GpuProfile {
  std::vector<LayerPoint> layers;
  std::vector<CollectivePoint> collectives;
  std::string source;  // where the points come from (free text)
};

struct ProfileSpec {
  std::vector<std::pair<std::string, GpuProfile>> gpus;  // GPU id -> points, in input order
  bool empty() const { return gpus.empty(); }
  // The points of GPU `id`, or nullptr.
  const GpuProfile* find(const std::string& id) const {
    for (const auto& g : gpus) {
      if (g.first == id) return &g.second;
    }
    return nullptr;
  }
};

// Cost terms that a stage's breakdown marks as measured / extrapolated (bit flags).
enum MeasuredTerm : unsigned {
  kTermForward = 1u << 0,
  kTermBackward = 1u << 1,
  kTermTpComm = 1u << 2,
  kTermEpComm = 1u << 3,
  kTermDpComm = 1u << 4,
};
// The breakdown field names of the set bits, in the order above ("forward_s", "ep_comm_s", ...).
std::vector<const char*> measured_term_names(unsigned terms);

const char* to_string(LayerKind k);
const char* to_string(CollectiveOp op);
const char* to_string(Placement p);

}  // namespace hapmoe
