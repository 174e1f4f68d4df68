// The search space: mesh shapes x stage placements, in a deterministic order.
#include <algorithm>
#include <set>

#include "hapmoe/rules.hpp"
#include "hapmoe/search.hpp"

namespace hapmoe {

namespace {
std::vector<int> powers_of_two_up_to(int limit) {
  std::vector<int> v;
  for (int x = 1; x <= limit; x *= 2) v.push_back(x);
  return v;
}

std::vector<int> or_default(const std::vector<int>& given, std::vector<int> fallback) {
  return given.empty() ? fallback : given;
}

// Identity of a node group for symmetry: groups with equal signatures (and equal stage counts)
// are interchangeable.
std::string group_signature(const NodeGroup& g) {
  return g.gpu.id + "|" + g.gpu.name + "|" + std::to_string(g.gpu.memory_gib) + "|" +
         std::to_string(g.gpu.bf16_tflops) + "|" + std::to_string(g.gpus_per_node) + "|" +
         std::to_string(g.inter_node_gbps);
}

void bump(std::map<std::string, long long>* pruned, const std::string& rule, long long n = 1) {
  (*pruned)[rule] += n;
}
}  // namespace

std::vector<Candidate> enumerate_candidates(const Scenario& s, std::map<std::string, long long>* pruned) {
  const ModelSpec& m = s.model;
  const SearchSpec& sp = s.search;
  const ClusterSpec& c = s.cluster;
  int max_gpn = 0, max_group = 0;
  for (const auto& g : c.groups) {
    max_gpn = std::max(max_gpn, g.gpus_per_node);
    max_group = std::max(max_group, g.gpus());
  }
  const std::vector<int> tps = or_default(sp.tp, powers_of_two_up_to(std::min(max_gpn, 64)));
  std::vector<int> cp_default{1};
  for (int x = 2; x <= 8; x *= 2) {
    if (s.training.seq_length / x >= 2048) cp_default.push_back(x);
  }
  const std::vector<int> cps = or_default(sp.cp, cp_default);
  std::vector<int> ep_default{1};
  for (int x = 2; x <= m.num_experts; x *= 2) {
    if (m.num_experts % x == 0) ep_default.push_back(x);
  }
  const std::vector<int> eps = or_default(sp.ep, ep_default);
  const std::vector<int> mbss = or_default(sp.micro_batch_size, {1, 2});
  const std::vector<int> vpps = or_default(sp.vpp, {1, 2, 4});
  const std::vector<Recompute> rcs =
      sp.recompute.empty() ? std::vector<Recompute>{Recompute::kNone, Recompute::kSelective, Recompute::kFull}
                           : sp.recompute;
  const std::set<int> allowed_pp(sp.pp.begin(), sp.pp.end());
  const int fixed_pp = sp.layer_split.empty() ? 0 : static_cast<int>(sp.layer_split.size());

  std::vector<std::string> group_ids;
  for (const auto& g : c.groups) group_ids.push_back(group_signature(g));
  std::vector<Candidate> out;
  for (int tp : tps) {
    for (int cp : cps) {
      for (int dp = 1; static_cast<long long>(tp) * cp * dp <= max_group; ++dp) {
        if (s.training.global_batch_size % dp != 0) continue;  // no micro-batch size can divide it
        const long long S = static_cast<long long>(tp) * cp * dp;
        // Stages each group can hold: all it can, or none (a type is used fully or left idle).
        std::vector<int> k_max(c.groups.size(), 0);
        std::vector<int> eligible;
        for (size_t g = 0; g < c.groups.size(); ++g) {
          const NodeGroup& grp = c.groups[g];
          const bool aligned = S % grp.gpus_per_node == 0 || grp.gpus_per_node % S == 0;
          k_max[g] = static_cast<int>(grp.gpus() / S);
          if (k_max[g] < 1) continue;
          if (grp.gpus_per_node % tp != 0) {
            bump(pruned, "tp_in_scale_up_domain");
            continue;
          }
          if (!aligned) {
            bump(pruned, "stage_node_alignment");
            continue;
          }
          eligible.push_back(static_cast<int>(g));
        }
        const int n = static_cast<int>(eligible.size());
        for (int mask = 1; mask < (1 << n); ++mask) {
          std::vector<int> used;
          int pp = 0;
          for (int b = 0; b < n; ++b) {
            if (mask & (1 << b)) {
              used.push_back(eligible[b]);
              pp += k_max[eligible[b]];
            }
          }
          if (pp > m.num_layers || (!allowed_pp.empty() && !allowed_pp.count(pp)) ||
              (fixed_pp > 0 && pp != fixed_pp)) {
            bump(pruned, "pp_range");
            continue;
          }
          // Distinct orders of the GPU types along the pipeline.
          std::set<std::vector<std::string>> seen;
          std::sort(used.begin(), used.end());
          do {
            std::vector<std::string> sig;
            for (int g : used) sig.push_back(group_ids[g] + "|" + std::to_string(k_max[g]));
            if (!seen.insert(sig).second) {
              bump(pruned, "symmetry");
              continue;
            }
            std::vector<int> stage_groups;
            for (int g : used) stage_groups.insert(stage_groups.end(), k_max[g], g);
            for (int ep : eps) {
              std::vector<int> etps = sp.etp;
              if (etps.empty()) etps = tp > 1 && m.is_moe() ? std::vector<int>{1, tp} : std::vector<int>{1};
              for (int etp : etps) {
                for (int mbs : mbss) {
                  for (int vpp : vpps) {
                    for (Recompute rc : rcs) {
                      Mesh mesh;
                      mesh.tp = tp; mesh.cp = cp; mesh.dp = dp; mesh.pp = pp; mesh.ep = ep;
                      mesh.etp = etp; mesh.vpp = vpp; mesh.micro_batch_size = mbs;
                      mesh.sequence_parallel = tp > 1;
                      mesh.recompute = rc;
                      if (vpp > 1 && pp * vpp > m.num_layers) {
                        bump(pruned, "vpp_layers");
                        continue;
                      }
                      if (auto v = check_mesh_rules(s, mesh)) {
                        bump(pruned, v->rule);
                        continue;
                      }
                      if (s.training.precision == Precision::kFp8) {
                        bool ok = true;
                        for (int g : used) ok = ok && c.groups[g].gpu.fp8_tflops.has_value();
                        if (!ok) {
                          bump(pruned, "fp8_needs_hardware");
                          continue;
                        }
                      }
                      out.push_back({mesh, stage_groups});
                    }
                  }
                }
              }
            }
          } while (std::next_permutation(used.begin(), used.end()));
        }
      }
    }
  }
  return out;
}

}  // namespace hapmoe
