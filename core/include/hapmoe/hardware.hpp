// Rates and links of a GPU type: achieved GEMM rate, peak for MFU, and which link a
// communication group uses (scale-up inside the node / NVLink domain, scale-out across it).
#pragma once

#include <string>
#include <vector>

#include "hapmoe/specs.hpp"

namespace hapmoe {

// A link as seen by one GPU: bandwidth (1e9 bytes/s, one direction), bus efficiency, latency.
struct Link {
  double gbps = 0;
  double efficiency = 1;
  double latency_s = 0;
  double bytes_per_s() const { return gbps * 1e9 * efficiency; }
};

// Per-operation latencies (NCCL-level), seconds.
inline constexpr double kScaleUpLatencyS = 10e-6;
inline constexpr double kScaleOutLatencyS = 25e-6;

Link scale_up_link(const NodeGroup& g);
Link scale_out_link(const NodeGroup& g);
// The same links with the all-to-all bus efficiency: many small peer-to-peer transfers reach a
// lower share of the wire than ring collectives, lowest across nodes (RDMA per peer, NIC
// message rate).
Link alltoall_scale_up_link(const NodeGroup& g);
Link alltoall_scale_out_link(const NodeGroup& g);
// The links of a dispatcher's token all-to-all: NCCL's (the all-to-all efficiencies above) for
// alltoall and allgather; DeepEP's and HybridEP's kernels reach most of the wire (DeepEP README,
// github.com/deepseek-ai/DeepEP, H800 normal kernels: intranode dispatch 153 and combine 158 GB/s
// of NVLink's 160; internode 43-58 GB/s RDMA on 50 GB/s NDR NICs), rounded down for smaller
// messages: kFlexScaleUpEfficiency, kFlexScaleOutEfficiency.
inline constexpr double kFlexScaleUpEfficiency = 0.9;
inline constexpr double kFlexScaleOutEfficiency = 0.85;
Link dispatch_scale_up_link(const NodeGroup& g, Dispatch d);
Link dispatch_scale_out_link(const NodeGroup& g, Dispatch d);
// EP ranks of one EP group on this rank's node: rank order tp-cp-ep-dp, so an EP group spans
// ep x etp consecutive expert ranks; ep when that fits in the node.
int ep_ranks_per_node(const NodeGroup& g, int ep, int etp);
// The link of a group of ranks laid out in `span` consecutive ranks of node group g
// (Megatron rank order tp-cp-ep-dp-pp): scale-up if the span fits in one node.
Link group_link(const NodeGroup& g, long long span);
// Link between two adjacent pipeline stages in different node groups.
Link inter_group_link(const ClusterSpec& c, int group_a, int group_b);

// The --fp8-recipe for FP8 training on these GPUs: `requested` if every GPU supports it, else
// "" (unsupported); with no request, the first recipe of the first GPU's list (best first) that
// every GPU supports, or "" when they share none.
std::string fp8_recipe_for(const std::string& requested, const std::vector<const GpuSpec*>& gpus);

// True when the GPU's efficiency constants were fitted on published runs (gemm_efficiency not
// listed as assumed).
bool efficiency_calibrated(const GpuSpec& gpu);
// Relative error band of a prediction on these GPUs: the widest of their error_fraction, its
// basis, and whether every GPU is calibrated.
struct ErrorBand {
  double fraction = 0;
  std::string basis;
  bool calibrated = true;
};
ErrorBand error_band(const std::vector<const GpuSpec*>& gpus);

// Dense peak for the precision (MFU denominator): fp8_tflops for fp8 when the GPU has it.
double peak_tflops(const GpuSpec& gpu, Precision p);
// Achieved large-GEMM rate in FLOP/s: bf16_tflops x gemm_efficiency, times fp8_gemm_speedup
// (achieved FP8/BF16 ratio, ~1.3-1.4 on Hopper, DESIGN.md) for fp8 on GPUs with FP8.
double gemm_flops_per_s(const GpuSpec& gpu, Precision p);

}  // namespace hapmoe
