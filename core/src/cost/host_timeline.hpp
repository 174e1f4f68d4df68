// Host and device as two timelines. In eager mode the host (one Python thread) launches every
// operation of a layer, and the GPU runs them in launch order; the host runs ahead of the GPU, so
// launch time hides behind a busier GPU, except where the host must wait for the GPU: the MoE
// dispatcher's synchronisation, which copies the token counts per expert to the host before the
// expert-parallel all-to-all (Megatron's MoEAlltoAllTokenDispatcher cuda_sync_point, DeepEP's and
// HybridEP's receive-size wait). After it the GPU idles until the host has launched the next
// operations: launch work after a sync point cannot overlap GPU work before it. CUDA graphs replay
// captured parts with one launch each.
#pragma once

#include <string>

#include "hapmoe/specs.hpp"

namespace hapmoe {

// Eager-mode host operations (module steps with their kernel launches) of one layer's forward
// pass, by part. Counted from Megatron-Core's TE layer structure (norm + linear fused, one op per
// GEMM, fused RoPE / router / permute kernels); FP8 adds the input quantisation of every GEMM:
// per-tensor current scaling ("tensorwise") computes an amax and casts (2 ops), the block-scaled
// recipes (blockwise, mxfp8) quantise in one fused op.
struct HostOps {
  double attention = 0;   // input norm + QKV, RoPE, core attention, projection, residual
  double router = 0;      // pre-MLP norm, router GEMM, fused top-k/score and aux loss
  double preprocess = 0;  // the dispatcher's token counts per expert and split sizes
  double dispatch = 0;    // permute, all-to-all, sort, activation, un-sort, combine, un-permute
  double per_expert = 0;  // each local expert's fc1 and fc2 GEMMs (TE GroupedLinear) + FP8 casts
  double shared = 0;      // shared expert MLP
  double mlp = 0;         // a dense layer's MLP (norm + fc1, activation, fc2, residual)
};
// fp8_recipe: "" = BF16 GEMMs; "tensorwise", "blockwise" or "mxfp8".
HostOps forward_host_ops(const ModelSpec& m, const std::string& fp8_recipe, Dispatch d);

// Host time of `ops` forward operations: ops x host_launch_us.
double host_launch_s(double ops, const GpuSpec& gpu);
// Whether the dispatcher waits for token counts on the host in every MoE layer's forward pass:
// dropless alltoall (before the EP all-to-all) and allgather, dropping without padding, DeepEP
// and HybridEP sizing their receive buffers; not with padding to capacity (counts known on the
// host) nor with HybridEP's static rank budget.
bool dispatcher_synchronises(const TrainingSpec& t, Dispatch d);
// One graph replay (cudaGraphLaunch) per captured part and pass, in operations.
inline constexpr double kGraphReplayOps = 1;
// Host-side cost of one dispatcher synchronisation: the device-to-host copy of the counts, the
// event wait and the Python .tolist() (tens of microseconds in PyTorch profiles of MoE layers; an
// assumption, not a published figure).
inline constexpr double kHostSyncS = 30e-6;

// GPU-side cost of one kernel boundary in a stream: the last wave of one kernel draining and the
// first of the next ramping up, which no host run-ahead hides (1-3 us between back-to-back small
// kernels in Nsight Systems timelines; an assumption, not fitted). Each eager forward operation
// is counted as one kernel, the backward pass as kBackwardKernelsPerForward as many (a GEMM's
// data and weight gradients; the elementwise ops' backward).
inline constexpr double kKernelGapS = 2e-6;
inline constexpr double kBackwardKernelsPerForward = 2;
// GPU time of the kernel boundaries of `kernels` kernels.
inline double kernel_gaps_s(double kernels) { return kernels * kKernelGapS; }

// One part of a timeline: its GPU time and the host time of its launches.
struct TimelinePart {
  double gpu_s = 0;
  double host_s = 0;
};

// Time from a host synchronisation (GPU idle, host starting) until both timelines have finished
// `parts` in order: each part's GPU work starts when the GPU is free and the host has begun
// launching it, and ends no earlier than its last launch (launches spread over the part).
// Equals max(sum gpu, sum host) when every part is GPU-bound or every part host-bound; exceeds it
// when a host-bound part comes first (its launches then hide behind nothing).
double segment_time_s(const TimelinePart* parts, int n);
// Host runs ahead without a synchronisation: max(sum gpu, sum host).
double unsynchronised_time_s(const TimelinePart* parts, int n);

}  // namespace hapmoe
