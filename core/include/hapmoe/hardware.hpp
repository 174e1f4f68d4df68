// Rates and links of a GPU type: achieved GEMM rate, peak for MFU, and which link a
// communication group uses (scale-up inside the node / NVLink domain, scale-out across it).
#pragma once

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
// The link of a group of ranks laid out in `span` consecutive ranks of node group g
// (Megatron rank order tp-cp-ep-dp-pp): scale-up if the span fits in one node.
Link group_link(const NodeGroup& g, long long span);
// Link between two adjacent pipeline stages in different node groups.
Link inter_group_link(const ClusterSpec& c, int group_a, int group_b);

// Dense peak for the precision (MFU denominator): fp8_tflops for fp8 when the GPU has it.
double peak_tflops(const GpuSpec& gpu, Precision p);
// Achieved large-GEMM rate in FLOP/s: bf16_tflops x gemm_efficiency, times fp8_gemm_speedup
// (achieved FP8/BF16 ratio, ~1.3-1.4 on Hopper, DESIGN.md) for fp8 on GPUs with FP8.
double gemm_flops_per_s(const GpuSpec& gpu, Precision p);

}  // namespace hapmoe
