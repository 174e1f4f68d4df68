#include "hapmoe/stage_cost.hpp"

#include <algorithm>
#include <optional>

#include "cost/cost_comm.hpp"
#include "cost/cost_compute.hpp"
#include "cost/host_timeline.hpp"
#include "spec/recompute.hpp"
#include "cost/profile_lookup.hpp"

namespace hapmoe {


namespace {

constexpr double kBf16 = 2;  // bytes per BF16 element (activations, hidden states on the wire)
constexpr double kFp32 = 4;  // bytes per fp32 element (logits, embedding gradients)
constexpr double kFlopsPerMac = 2;  // one multiply-add = 2 FLOPs (Megatron's FLOPs formula)
// Backward of an elementwise kernel reads the output gradient and the saved input and writes
// the input gradient: about twice the forward traffic.
constexpr double kElementwiseBackwardFactor = 2;
// Communication of a forward pass is mirrored in backward (gradients of the same tensors).
constexpr double kCommFwdPlusBwd = 2;
// Dispatch and combine: the token all-to-all (or gather/scatter) runs twice per MoE forward.
constexpr double kDispatchCombine = 2;
// A norm reads its input and writes its output (hidden-size elements per token).
constexpr double kNormElementsPerHidden = 2;
// Embedding lookup: read the row, write the output (per token, hidden-size elements).
constexpr double kEmbeddingFwdElementsPerHidden = 2;
// Embedding backward: fp32 scatter-add reads and writes the gradient row and the output grad.
constexpr double kEmbeddingBwdElementsPerHidden = 4;
// Cross-entropy over fp32 logits: max, exp-sum and gradient passes over the vocabulary.
constexpr double kLossPassesPerLogit = 3;
// MTP's projection of [embedding; hidden] (2h) back to h: 2h x h weights (DeepSeek-V3 MTP).
constexpr double kMtpProjInputsPerHidden = 2;
// Elementwise traffic per token on the attention side, in hidden-size elements: two RMSNorms
// (read + write), two residual adds (read 2, write 1).
constexpr double kAttnSideElementsPerHidden = 10;
// --overlap-moe-expert-parallel-comm pairs the forward of one micro-batch with the backward
// of another, so a layer's dispatch/combine hides behind the other micro-batch's compute; the
// share that stays exposed even when compute is longer (SM contention, unpaired warm-up and
// cool-down micro-batches) is an assumption, not a published figure.
constexpr double kEpOverlapMinExposedFraction = 0.1;
// Megatron's default DDP bucket: max(40M, 1M x DP) parameters.
constexpr double kDdpBucketParams = 40e6;

// CUDA graphs keep their captured buffers: "a few GB (over 10 GB with PP > 1)"
// (Megatron-Bridge docs/performance-guide.md, via calibration.md). Full-iteration graphs hold
// every micro-batch in flight; per-layer graphs the static inputs and outputs of their parts.
constexpr double kCudaGraphMemoryGib = 3;
constexpr double kCudaGraphMemoryPipelinedGib = 10;

// Everything the per-layer terms need, derived once.
struct LayerContext {
  const ModelSpec& m;
  const ModelShape& shape;
  const TrainingSpec& t;
  const Mesh& mesh;
  const NodeGroup& g;
  double tok = 0;   // tokens per micro-batch on this CP rank
  double tt = 0;    // tokens whose hidden-size tensors this GPU holds (SP-sharded)
  Link tp_link, cp_link, a2a_up, a2a_out;
  int ep_local = 1;
  const Scenario& s;
  int group;
  const GpuProfile* profile = nullptr;              // this GPU type's measured points, if any
  mutable unsigned measured = 0, extrapolated = 0;  // MeasuredTerm bits of the layer being costed

  double rho = 1;          // tokens of the busiest expert / the balanced share (moe_tokens_factor)
  std::string fp8_recipe;  // this GPU's --fp8-recipe in FP8 runs, "" in BF16

  LayerContext(const Scenario& sc, const ModelShape& sh, const Mesh& me, int gr)
      : m(sc.model), shape(sh), t(sc.training), mesh(me), g(sc.cluster.groups[gr]), s(sc), group(gr) {
    profile = sc.profile.find(g.gpu.id);
    tok = static_cast<double>(mesh.micro_batch_size) * t.seq_length / mesh.cp;
    tt = mesh.sequence_parallel ? tok / mesh.tp : tok;
    tp_link = group_link(g, mesh.tp);
    cp_link = group_link(g, static_cast<long long>(mesh.tp) * mesh.cp);
    a2a_up = dispatch_scale_up_link(g, mesh.dispatch);
    a2a_out = dispatch_scale_out_link(g, mesh.dispatch);
    ep_local = ep_ranks_per_node(g, mesh.ep, mesh.etp);
    rho = moe_tokens_factor(t);
    if (t.precision == Precision::kFp8) {
      fp8_recipe = fp8_recipe_for(t.fp8_recipe, {&g.gpu});
      if (fp8_recipe.empty()) fp8_recipe = "tensorwise";  // (a plan the rules reject)
    }
  }
  ActivationInputs act_inputs() const {
    return {tok, mesh.tp, mesh.sequence_parallel, mesh.etp, expert_activation_factor(t), mesh.recompute,
            t.precision == Precision::kFp8 ? kFp8ActivationBytes : kBf16ActivationBytes};
  }
  Precision p() const { return t.precision; }
  bool fp8_attention() const { return t.precision == Precision::kFp8 && t.fp8_dot_product_attention; }
  double hidden_bytes() const { return tok * m.hidden_size * kBf16; }
  // The link of a collective over `ranks` ranks laid out in `span` consecutive ranks: the
  // profile's measured bus bandwidth at `bytes` when it has that op and placement, else `analytical`.
  Link collective(CollectiveOp op, long long ranks, long long span, double bytes, const Link& analytical,
                  unsigned term) const {
    const Placement where = span <= g.gpus_per_node ? Placement::kIntraNode : Placement::kInterNode;
    return measured_link(profile, op, where, ranks, bytes, term, &measured, &extrapolated).value_or(analytical);
  }
};

struct Split {  // forward and backward pieces before exposure/recompute rules
  double fwd = 0, bwd = 0;
  Split& operator+=(const Split& o) {
    fwd += o.fwd;
    bwd += o.bwd;
    return *this;
  }
};

// Forward time of MLA's q / kv up-projections and the RoPE applied after them (what
// mla_up_proj recompute re-runs): q_lora x heads x (qk + rope) and kv_lora x heads x (qk + v)
// weights, split over TP.
double mla_up_proj_fwd_s(const LayerContext& c) {
  const ModelSpec& m = c.m;
  const double tp = c.mesh.tp, a = m.num_attention_heads, qk = m.qk_head_dim + m.qk_pos_emb_head_dim;
  const double params = (m.q_lora_rank > 0 ? m.q_lora_rank * a * qk : 0) +
                        static_cast<double>(m.kv_lora_rank) * a * (m.qk_head_dim + m.v_head_dim);
  const double min_dim = std::min<double>(m.kv_lora_rank, a * m.v_head_dim / tp);
  const double rope_elems = c.tok * a * qk * 2 / tp;
  return gemm_time_s(kFlopsPerMac * c.tok * params / tp, min_dim, c.g.gpu, c.p()) +
         elementwise_time_s(rope_elems * kBf16, c.g.gpu);
}

// Attention block compute: projections (GEMM), core (flash attention, BF16), elementwise.
Split attention_compute(const LayerContext& c, int layer, double* core_fwd_s) {
  const ModelSpec& m = c.m;
  const double tp = c.mesh.tp, h = m.hidden_size;
  double min_dim = 0, qk = 0, v = 0, elem = 0;
  if (m.multi_latent_attention) {
    min_dim = std::min<double>(m.kv_lora_rank, static_cast<double>(m.num_attention_heads) * m.v_head_dim / tp);
    qk = m.qk_head_dim + m.qk_pos_emb_head_dim;
    v = m.v_head_dim;
    elem = c.tok * m.num_attention_heads * qk * 2 / tp;  // rope + concat of q, k
  } else {
    min_dim = std::min<double>(h, static_cast<double>(m.num_attention_heads) * m.head_dim() / tp);
    qk = v = m.head_dim();
    elem = c.tok * (m.num_attention_heads + m.query_groups()) * m.head_dim() * 2 / tp;  // rope
  }
  elem += kAttnSideElementsPerHidden * c.tt * h;
  const double gemm_flops = kFlopsPerMac * c.tok * c.shape.attention_gemm_params / tp;
  const double window = m.layer_is_windowed(layer) ? m.window_size : 0;
  const double core_flops =
      attention_core_fwd_flops(c.t.seq_length, window, m.num_attention_heads, qk, v) *
      c.mesh.micro_batch_size / (tp * c.mesh.cp);
  const double gemm = gemm_time_s(gemm_flops, min_dim, c.g.gpu, c.p());
  const double core = attention_core_time_s(core_flops, c.g.gpu, c.fp8_attention(), m.softmax_type != "vanilla");
  const double ew = elementwise_time_s(
      elem * kBf16 + fp8_cast_bytes(c.tok * (h + m.num_attention_heads * v / tp), c.p()), c.g.gpu);
  *core_fwd_s = core;
  return {gemm + core + ew,
          kGemmBackwardFactor * gemm + kAttentionBackwardFactor * core + kElementwiseBackwardFactor * ew};
}

Split dense_mlp_compute(const LayerContext& c, int ffn_width, double params) {
  const double tp = c.mesh.tp, h = c.m.hidden_size;
  const double gemm =
      gemm_time_s(kFlopsPerMac * c.tok * params / tp, std::min<double>(h, ffn_width / tp), c.g.gpu, c.p());
  const double elem = c.tok * ffn_width / tp * (c.m.swiglu ? 3 : 2);
  const double ew = elementwise_time_s(elem * kBf16 + fp8_cast_bytes(c.tok * (h + ffn_width / tp), c.p()),
                                       c.g.gpu);
  return {gemm + ew, kGemmBackwardFactor * gemm + kElementwiseBackwardFactor * ew};
}

// MoE block GPU time, split at the dispatcher's token-count synchronisation: `pre` = router (+
// shared expert), `experts` = routed grouped GEMMs and the token traffic around them
// (moe_token_traffic_bytes + FP8 casts). Expert FLOPs per GPU are k x tokens / TP regardless of
// EP (DESIGN.md); EP sets the tokens per local expert.
struct MoeSplit {
  Split pre, experts;
  double act_fwd_s = 0;     // expert activation alone (what moe_act recompute re-runs)
  double shared_fwd_s = 0;  // shared expert alone (what shared_experts recompute re-runs)
};
MoeSplit moe_compute(const LayerContext& c) {
  const ModelSpec& m = c.m;
  const double tp = c.mesh.tp, h = m.hidden_size, k = m.moe_router_topk;
  const double copies = k * c.tok / tp * c.rho;
  const double tokens_per_expert =
      static_cast<double>(c.mesh.etp) * c.mesh.ep * k * c.tok / (tp * m.num_experts);
  const double routed_flops = kFlopsPerMac * copies * c.shape.expert_params;
  const double routed = grouped_gemm_time_s(routed_flops, tokens_per_expert,
                                            std::min<double>(h, m.moe_ffn_hidden_size / c.mesh.etp),
                                            c.g.gpu, c.p());
  const double router =
      gemm_time_s(kFlopsPerMac * c.tt * h * m.num_experts, m.num_experts, c.g.gpu, Precision::kBf16);
  const double traffic =
      moe_token_traffic_bytes(copies, c.mesh.etp * h, m.moe_ffn_hidden_size, m.swiglu, c.tt, m.num_experts) +
      fp8_cast_bytes(copies * (c.mesh.etp * h + m.moe_ffn_hidden_size), c.p());
  const double ew = elementwise_time_s(traffic, c.g.gpu);
  MoeSplit s;
  s.act_fwd_s = elementwise_time_s(copies * m.moe_ffn_hidden_size * (m.swiglu ? 3 : 2) * kBf16, c.g.gpu);
  s.experts = {routed + ew, kGemmBackwardFactor * routed + kElementwiseBackwardFactor * ew};
  s.pre = {router, kGemmBackwardFactor * router};
  if (m.moe_shared_expert_intermediate_size > 0) {
    const Split shared = dense_mlp_compute(c, m.moe_shared_expert_intermediate_size, c.shape.shared_expert_params);
    s.pre += shared;
    s.shared_fwd_s = shared.fwd;
  }
  return s;
}

// TP collectives of one layer's forward: all-gather + reduce-scatter (SP) or all-reduce around
// attention and around a TP-parallel MLP / shared expert.
double tp_comm_fwd_s(const LayerContext& c, int layer) {
  if (c.mesh.tp <= 1) return 0;
  const bool tp_mlp = !c.m.layer_is_moe(layer) || c.m.moe_shared_expert_intermediate_size > 0;
  const int collectives = 2 + (tp_mlp ? 2 : 0);
  const CollectiveOp op = c.mesh.sequence_parallel ? CollectiveOp::kAllGather : CollectiveOp::kAllReduce;
  const Link link = c.collective(op, c.mesh.tp, c.mesh.tp, c.hidden_bytes(), c.tp_link, kTermTpComm);
  return collectives * ring_collective_time_s(c.hidden_bytes(), c.mesh.tp, link);
}

// CP ring exchange of K and V, overlapped with the attention core it feeds.
Split cp_comm(const LayerContext& c, double core_fwd_s) {
  if (c.mesh.cp <= 1) return {};
  const ModelSpec& m = c.m;
  const double kv_elems = m.multi_latent_attention
                              ? static_cast<double>(m.num_attention_heads) * (m.qk_head_dim + m.qk_pos_emb_head_dim + m.v_head_dim)
                              : 2.0 * m.query_groups() * m.head_dim();
  const double step_bytes = c.tok * kv_elems / c.mesh.tp * kBf16;
  const double comm = (c.mesh.cp - 1) * p2p_time_s(step_bytes, c.cp_link);
  const double window = core_fwd_s * (c.mesh.cp - 1) / c.mesh.cp;
  return {exposed_after_overlap_s(comm, window, 0),
          exposed_after_overlap_s(kCommFwdPlusBwd * comm, kAttentionBackwardFactor * window, 0)};
}

// Token dispatch + combine of one MoE layer's forward (alltoall / flex over EP, allgather over
// TP x EP), plus the ETP all-gather / reduce-scatter of dispatched tokens.
double ep_comm_fwd_s(const LayerContext& c) {
  const ModelSpec& m = c.m;
  const double rho = c.rho, h = m.hidden_size;
  const int ep = c.mesh.ep, etp = c.mesh.etp;
  double t = 0;
  if (c.mesh.dispatch == Dispatch::kAllgather) {
    const long long n = static_cast<long long>(c.mesh.tp) * ep;
    const double bytes = allgather_dispatch_bytes(c.tok / c.mesh.tp, h * kBf16, static_cast<int>(n));
    const Link link = c.collective(CollectiveOp::kAllGather, n, n * c.mesh.cp, bytes, group_link(c.g, n * c.mesh.cp),
                                   kTermEpComm);
    t = kDispatchCombine * ring_collective_time_s(bytes, n, link);
  } else if (ep > 1) {
    const AlltoallTraffic traffic =
        ep_dispatch_traffic(c.mesh.dispatch, c.tok / c.mesh.tp, h * kBf16, m.moe_router_topk,
                            ep, c.ep_local, m.moe_router_num_groups, m.moe_router_group_topk);
    t = kDispatchCombine * alltoall_time_s(traffic, c.a2a_up, c.a2a_out) * rho;
    // Profile: nccl-tests' all-to-all busbw counts every byte sent to another rank.
    const double sent = traffic.intra_bytes + traffic.inter_bytes;
    const Placement where = c.ep_local == ep ? Placement::kIntraNode : Placement::kInterNode;
    if (auto l = measured_link(c.profile, CollectiveOp::kAllToAll, where, ep, sent * ep / (ep - 1), kTermEpComm,
                               &c.measured, &c.extrapolated)) {
      t = kDispatchCombine * sent / l->bytes_per_s() * rho;
    }
  }
  if (etp > 1) {
    const double copies = m.moe_router_topk * c.tok / c.mesh.tp * rho;
    const double bytes = copies * etp * h * kBf16;
    t += kDispatchCombine * ring_collective_time_s(
                                bytes, etp, c.collective(CollectiveOp::kAllGather, etp, etp, bytes, group_link(c.g, etp), kTermEpComm));
  }
  return t;
}

LayerCost make_layer_cost(const LayerContext& c, int layer);

// The analytical compute times of `layer` at another shape (profile_lookup's scaling rule).
LayerTimes analytical_layer_times(const LayerContext& c, int layer, const LayerQuery& q) {
  Scenario s = c.s;
  s.training.seq_length = q.seq_length;
  s.profile = {};
  Mesh mesh = c.mesh;
  mesh.tp = q.tp, mesh.cp = q.cp, mesh.ep = q.ep, mesh.etp = q.etp;
  mesh.micro_batch_size = q.micro_batch_size;
  mesh.sequence_parallel = q.tp > 1;
  mesh.recompute = Recompute::kNone;
  const ModelShape shape = derive_model_shape(s.model, q.tp);
  const LayerCost lc = make_layer_cost(LayerContext(s, shape, mesh, c.group), layer);
  return {lc.fwd_s, lc.bwd_s, false};
}

// Profile: measured compute of this layer's kind and shape replaces the analytical one.
void apply_measured_compute(const LayerContext& c, int layer, LayerCost* lc) {
  if (!c.profile) return;
  const LayerQuery q{c.m.layer_is_moe(layer) ? LayerKind::kMoe : LayerKind::kDense, c.mesh.tp, c.mesh.cp,
                     c.mesh.ep, c.mesh.etp, c.mesh.micro_batch_size, c.t.seq_length};
  auto analytical = [&](const LayerQuery& at) { return analytical_layer_times(c, layer, at); };
  const std::optional<LayerTimes> t = measured_layer_times(*c.profile, q, analytical);
  if (!t) return;
  lc->fwd_s = t->fwd_s;
  lc->bwd_s = t->bwd_s;
  c.measured |= kTermForward | kTermBackward;
  if (t->extrapolated) c.extrapolated |= kTermForward | kTermBackward;
}

// Host time of a layer part's forward launches: `ops` operations eagerly, one graph replay when
// a per-layer CUDA graph captures the part, nothing under a full-iteration graph.
double part_host_s(const LayerContext& c, double ops, bool captured) {
  if (!captured) return host_launch_s(ops, c.g.gpu);
  return c.mesh.cuda_graphs.impl == GraphImpl::kFullIteration ? 0 : host_launch_s(kGraphReplayOps, c.g.gpu);
}

LayerCost make_layer_cost(const LayerContext& c, int layer) {
  const ModelSpec& m = c.m;
  LayerCost lc;
  c.measured = c.extrapolated = 0;
  LayerForwardParts parts;  // what selective recompute may re-run
  const Split attn = attention_compute(c, layer, &parts.core_attn_s);
  const bool moe = m.layer_is_moe(layer);
  Split pre, experts, mlp;  // MoE: router (+ shared expert) | routed experts; dense: the MLP
  if (moe) {
    const MoeSplit ms = moe_compute(c);
    pre = ms.pre;
    experts = ms.experts;
    parts.moe_s = ms.pre.fwd + ms.experts.fwd;
    parts.moe_act_s = ms.act_fwd_s;
    parts.shared_experts_s = ms.shared_fwd_s;
  } else {
    mlp = dense_mlp_compute(c, m.ffn_hidden_size, c.shape.dense_mlp_params);
    parts.mlp_s = mlp.fwd;
  }
  const int separate_norms = (moe ? 1 : 0) + (m.multi_latent_attention ? 1 : 0);
  parts.norms_s = elementwise_time_s(separate_norms * kNormElementsPerHidden * c.tt * m.hidden_size * kBf16, c.g.gpu);
  if (m.multi_latent_attention) parts.mla_up_proj_s = mla_up_proj_fwd_s(c);

  // Exposed communication of the forward pass; the backward pass moves the same bytes.
  const double tp_f = tp_comm_fwd_s(c, layer);
  const bool tp_mlp = c.mesh.tp > 1 && (!moe || m.moe_shared_expert_intermediate_size > 0);
  const double tp_mlp_f = tp_mlp ? tp_f / 2 : 0;  // the MLP's (or shared expert's) all-gather + reduce-scatter
  const Split cp = cp_comm(c, parts.core_attn_s);
  const double compute_f = attn.fwd + pre.fwd + experts.fwd + mlp.fwd;
  const double compute_b = attn.bwd + pre.bwd + experts.bwd + mlp.bwd;
  double ep_f = moe ? ep_comm_fwd_s(c) : 0;
  if (c.mesh.ep_comm_overlap) {
    ep_f = exposed_after_overlap_s(kCommFwdPlusBwd * ep_f, compute_f + compute_b, kEpOverlapMinExposedFraction) /
           kCommFwdPlusBwd;
  }
  const double comm_f = tp_f + cp.fwd + ep_f, comm_b = tp_f + cp.bwd + ep_f;

  // The two timelines (host_timeline.hpp): GPU parts in launch order with their launch times.
  const CudaGraphs& graphs = c.mesh.cuda_graphs;
  const HostOps ops = forward_host_ops(m, c.fp8_recipe, c.mesh.dispatch);
  const double local_experts = moe ? static_cast<double>(m.num_experts) / c.mesh.ep : 0;
  const bool moe_graphed = graphs.captures(kGraphMoe);
  // Kernels per part (one per eager operation), whose boundaries cost GPU time (kKernelGapS).
  const double attn_kernels = ops.attention;
  const double pre_kernels = moe ? ops.router + ops.shared + ops.preprocess : ops.mlp;
  const double post_kernels = moe ? ops.dispatch + ops.per_expert * local_experts : 0;
  const TimelinePart attention{attn.fwd + (tp_f - tp_mlp_f) + cp.fwd + kernel_gaps_s(attn_kernels),
                               part_host_s(c, ops.attention, graphs.captures(kGraphAttn))};
  TimelinePart before, after;  // the MLP part; for MoE the parts before and after the dispatcher's sync
  if (moe) {
    before.gpu_s = pre.fwd + tp_mlp_f + kernel_gaps_s(pre_kernels);
    before.host_s = part_host_s(c, ops.router + ops.shared, moe_graphed || graphs.captures(kGraphMoeRouter)) +
                    part_host_s(c, ops.preprocess, moe_graphed || graphs.captures(kGraphMoePreprocess));
    after.gpu_s = experts.fwd + ep_f + kernel_gaps_s(post_kernels);
    after.host_s = part_host_s(c, ops.dispatch + ops.per_expert * local_experts, moe_graphed);
  } else {
    before.gpu_s = mlp.fwd + tp_mlp_f + kernel_gaps_s(pre_kernels);
    before.host_s = part_host_s(c, ops.mlp, graphs.captures(kGraphMlp));
  }
  const double host_f = attention.host_s + before.host_s + after.host_s;
  const double fwd_kernels = attn_kernels + pre_kernels + post_kernels;
  const TimelinePart backward{compute_b + comm_b + kernel_gaps_s(kBackwardKernelsPerForward * fwd_kernels),
                              c.g.gpu.host_backward_factor * host_f};
  // A synchronising dispatcher splits the forward pass: after the sync the host launches this
  // layer's dispatch and experts, then the next layer's attention and router (attributed here).
  const bool sync = moe && dispatcher_synchronises(c.t, c.mesh.dispatch);
  double fwd_t = 0, bwd_t = 0;
  if (c.mesh.ep_comm_overlap) {
    // 1F1B with EP overlap interleaves each layer's backward with another micro-batch's forward.
    const TimelinePart seq[] = {after, backward, attention, before};
    const double t = sync ? segment_time_s(seq, 4) + kHostSyncS : unsynchronised_time_s(seq, 4);
    const double gf = attention.gpu_s + before.gpu_s + after.gpu_s;
    fwd_t = t * gf / (gf + backward.gpu_s);
    bwd_t = t - fwd_t;
  } else {
    const TimelinePart seq[] = {after, attention, before};
    fwd_t = sync ? segment_time_s(seq, 3) + kHostSyncS : unsynchronised_time_s(seq, 3);
    bwd_t = unsynchronised_time_s(&backward, 1);
  }
  lc.fwd_s = fwd_t - comm_f;  // compute incl. launch stalls; the communication is reported apart
  lc.bwd_s = bwd_t - comm_b;
  apply_measured_compute(c, layer, &lc);
  lc.tp_s = kCommFwdPlusBwd * tp_f;
  lc.cp_s = cp.fwd + cp.bwd;
  lc.ep_s = kCommFwdPlusBwd * ep_f;
  lc.fwd_comm_s = comm_f;

  if (c.mesh.recompute.full()) {
    lc.bwd_s += lc.fwd_s;
    lc.tp_s += tp_f;
    lc.cp_s += cp.fwd;
    lc.ep_s += ep_f;
  } else {
    parts.mlp_tp_comm_s = tp_mlp_f;
    parts.moe_ep_comm_s = ep_f;
    const RecomputeExtra x = selective_recompute_extra(c.mesh.recompute, parts);
    lc.bwd_s += x.compute_s;
    lc.tp_s += x.tp_s;
    lc.ep_s += x.ep_s;
  }
  lc.dense_params = c.shape.layer_tp_sharded_params(m, layer) / c.mesh.tp +
                    c.shape.layer_replicated_params(m, layer);
  lc.expert_params = c.shape.layer_expert_params(m, layer) / (static_cast<double>(c.mesh.ep) * c.mesh.etp);
  lc.activation_bytes = layer_activation_bytes(m, layer, c.act_inputs());
  lc.measured_terms = c.measured;
  lc.extrapolated_terms = c.extrapolated;
  return lc;
}

}  // namespace

double cuda_graph_memory_gib(const CudaGraphs& g, int pp) {
  if (!g.any()) return 0;
  return pp > 1 ? kCudaGraphMemoryPipelinedGib : kCudaGraphMemoryGib;
}

StageCostModel::StageCostModel(const Scenario& s, const ModelShape& shape, const Mesh& mesh, int group)
    : s_(s), group_(group) {
  const LayerContext c(s, shape, mesh, group);
  profile_ = c.profile;
  const ModelSpec& m = s.model;
  kind_of_.reserve(m.num_layers);
  // A layer's terms depend on its index only through whether it is MoE and whether it uses
  // sliding-window attention: cost each of those (at most 4) kinds once, and keep each layer's
  // kind rather than a copy of its terms.
  int kind_index[4] = {-1, -1, -1, -1};  // into kinds_, per kind
  int first_layer[4];                    // per index into kinds_: its kind's first layer
  int layers[4] = {0, 0, 0, 0};          // per index into kinds_: its layers
  int num_kinds = 0;
  for (int i = 0; i < m.num_layers; ++i) {
    const int k = (m.layer_is_moe(i) ? 2 : 0) + (m.layer_is_windowed(i) ? 1 : 0);
    if (kind_index[k] < 0) {
      kind_index[k] = num_kinds;
      first_layer[num_kinds++] = i;
    }
    kind_of_.push_back(static_cast<unsigned char>(kind_index[k]));
    ++layers[kind_index[k]];
  }
  kinds_.reserve(num_kinds);  // (one allocation each: 6,000 models on a 2048-GPU cluster)
  for (int j = 0; j < num_kinds; ++j) kinds_.push_back(make_layer_cost(c, first_layer[j]));
  kind_layers_.assign(layers, layers + num_kinds);
  // Working bytes depend on a layer only through its kind (as its LayerCost does): the max over
  // the layers is the max over one layer of each kind present.
  if (mesh.recompute.full()) {
    for (int j = 0; j < num_kinds; ++j) {
      working_bytes_ = std::max(working_bytes_, layer_working_bytes(m, first_layer[j], c.act_inputs()));
    }
  } else if (mesh.recompute != Recompute::kNone) {
    // Selective: what one layer's recomputed modules rebuild before their backward (at most all
    // of them at once; Megatron rebuilds them module by module, so this is an upper bound).
    for (int j = 0; j < num_kinds; ++j) {
      const int i = first_layer[j];
      working_bytes_ = std::max(working_bytes_, layer_working_bytes(m, i, c.act_inputs()) - layer(i).activation_bytes);
    }
  }
  p2p_bytes_ = c.tt * m.hidden_size * kBf16;

  // Input embedding (first stage): lookup writes, gradient scatter-add.
  const double tp = mesh.tp, h = m.hidden_size, vocab = shape.padded_vocab;
  first_extras_.fwd_s = elementwise_time_s(kEmbeddingFwdElementsPerHidden * c.tt * h * kBf16, c.g.gpu);
  first_extras_.bwd_s = elementwise_time_s(kEmbeddingBwdElementsPerHidden * c.tt * h * kFp32, c.g.gpu);
  first_extras_.dense_params = shape.embedding_params / tp;
  first_extras_.activation_bytes = c.tt * h * kBf16;
  // Output layer and loss (last stage), and the MTP layers with their own heads.
  const double logits_gemm = gemm_time_s(kFlopsPerMac * c.tok * h * vocab / tp, std::min(h, vocab / tp), c.g.gpu, Precision::kBf16);
  const double loss = elementwise_time_s(kLossPassesPerLogit * c.tok * vocab / tp * kFp32, c.g.gpu);
  const double head_tp = mesh.tp > 1 ? ring_collective_time_s(c.hidden_bytes(), mesh.tp, c.tp_link) : 0;
  const int mtp = m.mtp_num_layers;
  const LayerCost& last = layer(m.num_layers - 1);
  last_extras_.fwd_s = (1 + mtp) * (logits_gemm + loss) + mtp * last.fwd_s +
                       mtp * gemm_time_s(kFlopsPerMac * c.tok * kMtpProjInputsPerHidden * h * h / tp, h, c.g.gpu, c.p());
  last_extras_.bwd_s = (1 + mtp) * (kGemmBackwardFactor * logits_gemm + loss) + mtp * last.bwd_s +
                       mtp * kGemmBackwardFactor * gemm_time_s(kFlopsPerMac * c.tok * kMtpProjInputsPerHidden * h * h / tp, h, c.g.gpu, c.p());
  last_extras_.tp_s = (1 + mtp) * kCommFwdPlusBwd * head_tp + mtp * last.tp_s;
  last_extras_.ep_s = mtp * last.ep_s;
  last_extras_.fwd_comm_s = (1 + mtp) * head_tp + mtp * last.fwd_comm_s;
  if (!m.untie_embeddings_and_output_weights || mtp > 0) embedding_copy_params_ = shape.embedding_params / tp;
  last_extras_.dense_params = shape.output_params / tp + shape.final_norm_params +
                              mtp * (last.dense_params + shape.mtp_extra_params / tp);
  last_extras_.expert_params = mtp * last.expert_params;
  last_extras_.activation_bytes = logits_activation_bytes(c.tok, mesh.tp, shape.padded_vocab) +
                                  mtp * last.activation_bytes;
}

void StageCostModel::build_sums() const {
  sums_.reserve(kind_of_.size() + 1);
  sums_.emplace_back();
  for (size_t i = 0; i < kind_of_.size(); ++i) {
    const LayerCost& l = kinds_[kind_of_[i]];
    const Sums p = sums_[i];
    Sums n;
    n.fwd = p.fwd + l.fwd_s;
    n.bwd = p.bwd + l.bwd_s;
    n.tp = p.tp + l.tp_s;
    n.cp = p.cp + l.cp_s;
    n.ep = p.ep + l.ep_s;
    n.fwd_comm = p.fwd_comm + l.fwd_comm_s;
    n.dense = p.dense + l.dense_params;
    n.expert = p.expert + l.expert_params;
    n.act = p.act + l.activation_bytes;
    sums_.push_back(n);
  }
}

double StageCostModel::link_s(const Link& link) const { return kCommFwdPlusBwd * p2p_time_s(p2p_bytes_, link); }

StageCost StageCostModel::cost(int stage, int first_layer, int num_layers, const StageLinks& links,
                               const Mesh& mesh_) const {
  const int a = first_layer, b = first_layer + num_layers;
  const bool first = stage == 0, last = stage == mesh_.pp - 1;
  const NodeGroup& g = s_.cluster.groups[group_];
  Extras ex;
  auto add = [&ex](const Extras& e) {
    ex.fwd_s += e.fwd_s; ex.bwd_s += e.bwd_s; ex.tp_s += e.tp_s; ex.ep_s += e.ep_s;
    ex.fwd_comm_s += e.fwd_comm_s; ex.dense_params += e.dense_params;
    ex.expert_params += e.expert_params; ex.activation_bytes += e.activation_bytes;
  };
  if (first) add(first_extras_);
  if (last) add(last_extras_);
  if (last && mesh_.pp > 1) ex.dense_params += embedding_copy_params_;

  // The terms are kept in locals and the StageCost is built from them at the end: in wasm, a
  // StageCost zeroed first and filled in field by field was a memset call per cost (2% of the
  // 8-type search in the browser).
  const std::vector<Sums>& sums = this->sums();
  const Sums& sa = sums[a];
  const Sums& sb = sums[b];
  const double forward_s = sb.fwd - sa.fwd + ex.fwd_s;
  const double backward_s = sb.bwd - sa.bwd + ex.bwd_s;
  const double tp_s = sb.tp - sa.tp + ex.tp_s;
  const double cp_s = sb.cp - sa.cp;
  const double ep_s = sb.ep - sa.ep + ex.ep_s;
  double p2p = 0;
  if (links.prev) p2p += link_s(*links.prev);
  if (links.next) p2p += link_s(*links.next);
  const double pp_s = mesh_.vpp > 1 ? p2p * mesh_.vpp * kInterleavedP2pExposedFraction : p2p;

  // Data-parallel gradient reduce-scatter / parameter all-gather, overlapped with the last
  // micro-batch's backward and the first micro-batch's forward of the stage.
  const double dense = sb.dense - sa.dense + ex.dense_params;
  const double expert = sb.expert - sa.expert + ex.expert_params;
  const long long dense_shards = static_cast<long long>(mesh_.dp) * mesh_.cp;
  const long long expert_shards = mesh_.expert_dp();
  const Link dp_link = group_link(g, mesh_.stage_gpus());
  const bool distopt = s_.training.use_distributed_optimizer;
  const double offload = mesh_.optimizer_offload_fraction;
  const WeightBytes wb = weight_bytes(s_.training, offload);
  const double gather_bytes = wb.fp8_param_gather ? kFp8ActivationBytes : wb.param;  // FP8 params gather as FP8
  const double buckets = std::max(1.0, (dense + expert) / std::max(kDdpBucketParams, 1e6 * mesh_.dp));
  const Placement dp_where = mesh_.stage_gpus() <= g.gpus_per_node ? Placement::kIntraNode : Placement::kInterNode;
  unsigned measured = 0, extrapolated = 0;  // MeasuredTerm bits of the profile points used
  auto dp_ring = [&](CollectiveOp op, double bytes, long long shards) {  // profile: one bucket's busbw
    const Link link = measured_link(profile_, op, dp_where, shards, bytes / buckets, kTermDpComm, &measured,
                                    &extrapolated).value_or(dp_link);
    return ring_collective_time_s(bytes, shards, link);
  };
  const CollectiveOp reduce_op = distopt ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce;
  double reduce = dp_ring(reduce_op, dense * wb.grad, dense_shards) + dp_ring(reduce_op, expert * wb.grad, expert_shards);
  double gather = dp_ring(CollectiveOp::kAllGather, dense * gather_bytes, dense_shards) +
                  dp_ring(CollectiveOp::kAllGather, expert * gather_bytes, expert_shards);
  if (!distopt) {
    reduce *= 2;
    gather = 0;
  }
  const double fwd_comm_s = sb.fwd_comm - sa.fwd_comm + ex.fwd_comm_s;
  const double fwd_window = forward_s + fwd_comm_s;
  const double per_microbatch_s = forward_s + backward_s + tp_s + cp_s + ep_s + pp_s;  // as StageCost's
  const double bwd_window = per_microbatch_s - fwd_window;
  const double dp_s = (s_.training.overlap_grad_reduce ? exposed_after_overlap_s(reduce, bwd_window, 1 / buckets) : reduce) +
                      (s_.training.overlap_param_gather ? exposed_after_overlap_s(gather, fwd_window, 1 / buckets) : gather);
  const double owned = distopt ? dense / dense_shards + expert / expert_shards : dense + expert;
  const double optimizer_s = optimizer_step_time_s((1 - offload) * owned, dense + expert, g.gpu) +
                             optimizer_offload_time_s(offload * owned, wb.grad, wb.param, g.gpu);

  const double layer_params = sb.dense - sa.dense + sb.expert - sa.expert;
  const WeightMemory weights = weight_memory(dense, expert, dense_shards, expert_shards, distopt, wb, layer_params);
  const double in_flight = in_flight_microbatches(stage, mesh_.pp, mesh_.vpp, num_microbatches(s_.training, mesh_));
  double act = in_flight * (sb.act - sa.act);
  if (first) act += in_flight * first_extras_.activation_bytes;
  if (last) act += last_extras_.activation_bytes;
  const double reserved_bytes = (g.gpu.reserved_memory_gib + cuda_graph_memory_gib(mesh_.cuda_graphs, mesh_.pp)) * kGiB;
  if (profile_) {  // which terms of this stage's layers came from measured points
    for (int i = a; i < b; ++i) {
      measured |= layer(i).measured_terms;
      extrapolated |= layer(i).extrapolated_terms;
    }
  }
  // Every field, in StageCost's order.
  return StageCost{forward_s,      backward_s, tp_s,           cp_s,       ep_s,
                   pp_s,           fwd_comm_s, dp_s,           optimizer_s, weights,
                   act + working_bytes_,       reserved_bytes, g.gpu.memory_gib * kGiB,
                   in_flight,      measured,   extrapolated};
}

}  // namespace hapmoe
