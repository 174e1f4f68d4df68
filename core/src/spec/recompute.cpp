#include "spec/recompute.hpp"

namespace hapmoe {

RecomputeExtra selective_recompute_extra(const Recompute& rc, const LayerForwardParts& p) {
  RecomputeExtra x;
  if (rc.kind != Recompute::Kind::kSelective) return x;
  if (rc.has(kRecomputeCoreAttn)) x.compute_s += p.core_attn_s;
  if (rc.has(kRecomputeLayernorm)) x.compute_s += p.norms_s;
  if (rc.has(kRecomputeMlaUpProj)) x.compute_s += p.mla_up_proj_s;
  if (rc.has(kRecomputeMlp) && p.mlp_s > 0) {
    x.compute_s += p.mlp_s;
    x.tp_s += p.mlp_tp_comm_s;
  }
  if (rc.has(kRecomputeMoe) && p.moe_s > 0) {
    x.compute_s += p.moe_s;  // includes the activation and the shared expert
    x.ep_s += p.moe_ep_comm_s;
    x.tp_s += p.mlp_tp_comm_s;
    return x;
  }
  if (rc.has(kRecomputeMoeAct)) x.compute_s += p.moe_act_s;
  if (rc.has(kRecomputeSharedExperts) && p.shared_experts_s > 0) {
    x.compute_s += p.shared_experts_s;
    x.tp_s += p.mlp_tp_comm_s;
  }
  return x;
}

unsigned applicable_recompute_modules(const ModelSpec& m) {
  unsigned bits = kRecomputeCoreAttn;
  bool dense_layer = !m.is_moe();
  for (int i = 0; i < m.num_layers && !dense_layer; ++i) dense_layer = !m.layer_is_moe(i);
  if (m.is_moe() || m.multi_latent_attention) bits |= kRecomputeLayernorm;
  if (m.multi_latent_attention) bits |= kRecomputeMlaUpProj;
  if (dense_layer) bits |= kRecomputeMlp;
  if (m.is_moe()) bits |= kRecomputeMoe | kRecomputeMoeAct;
  if (m.is_moe() && m.moe_shared_expert_intermediate_size > 0) bits |= kRecomputeSharedExperts;
  return bits;
}

unsigned rejected_recompute_modules(const ModelSpec& m) {
  unsigned bits = 0;
  if (!m.multi_latent_attention) bits |= kRecomputeMlaUpProj;
  if (!m.is_moe()) bits |= kRecomputeMoeAct;
  return bits;
}

std::vector<Recompute> default_recompute_choices(const ModelSpec& m) {
  std::vector<Recompute> v{Recompute::kNone};
  if (m.is_moe()) {
    v.push_back(Recompute::of_modules(kRecomputeMoeAct | kRecomputeLayernorm));
    // The next step up: MLA's up-projected q/k/v and the attention core; without MLA the whole
    // MoE block (the core's saving is small under fused attention).
    v.push_back(Recompute::of_modules(m.multi_latent_attention
                                          ? kRecomputeCoreAttn | kRecomputeMoeAct |
                                                kRecomputeLayernorm | kRecomputeMlaUpProj
                                          : kRecomputeLayernorm | kRecomputeMoe));
  } else {
    v.push_back(Recompute::kSelective);
    v.push_back(Recompute::of_modules(kRecomputeCoreAttn | kRecomputeMlp));
  }
  v.push_back(Recompute::kFull);
  return v;
}

}  // namespace hapmoe
