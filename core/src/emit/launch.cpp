#include "emit/launch.hpp"

#include "emit/megatron_version.hpp"

#include <cstdio>
#include <sstream>

#include "emit/megatron_args.hpp"

namespace hapmoe {

namespace {
// Compute capability from which Megatron no longer needs CUDA_DEVICE_MAX_CONNECTIONS=1.
constexpr double kCudaArchNoMaxConnections = 10;

std::string host_name(const HostGroup& h, int k) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "-g%d-%03d", h.group, k);
  return h.gpu + buf;
}

std::string range(int a, int b) { return a == b ? std::to_string(a) : std::to_string(a) + "-" + std::to_string(b); }

int total_hosts(const std::vector<HostGroup>& hosts) {
  return hosts.empty() ? 0 : hosts.back().first_host + hosts.back().hosts;
}
}  // namespace

std::vector<HostGroup> launch_host_groups(const Scenario& s, const PlanSpec& p) {
  std::vector<HostGroup> out;
  const long long stage_gpus = static_cast<long long>(p.tp) * p.cp * p.dp;
  long long rank = 0;
  int host = 0;
  auto push = [&](const NodeGroup& g, int group, int hosts, int procs) {
    HostGroup h{group, g.gpu.id, g.gpu.vendor, host, hosts, procs, 0, 0};
    h.first_stage = static_cast<int>(rank / stage_gpus);
    rank += static_cast<long long>(hosts) * procs;
    h.last_stage = static_cast<int>((rank - 1) / stage_gpus);
    host += hosts;
    out.push_back(h);
  };
  for (size_t i = 0; i < p.stages.size();) {
    size_t j = i;
    while (j < p.stages.size() && p.stages[j].group == p.stages[i].group) ++j;
    const int group = p.stages[i].group;
    const NodeGroup& g = s.cluster.groups[group];
    const long long gpus = static_cast<long long>(j - i) * stage_gpus;
    if (gpus >= g.gpus_per_host) push(g, group, static_cast<int>(gpus / g.gpus_per_host), g.gpus_per_host);
    if (gpus % g.gpus_per_host != 0) push(g, group, 1, static_cast<int>(gpus % g.gpus_per_host));
    i = j;
  }
  return out;
}

std::string hostfile_text(const std::vector<HostGroup>& hosts) {
  std::ostringstream o;
  o << "# " << total_hosts(hosts) << " hosts in pipeline-stage order: line k (comments skipped, from 0) is "
    << "NODE_RANK k.\n# Replace the names with your hosts' addresses; keep the order and the GPU type of "
    << "each line.\n";
  for (const HostGroup& h : hosts) {
    o << "# hosts " << range(h.first_host, h.first_host + h.hosts - 1) << ": " << h.gpu << ", " << h.procs_per_host
      << " GPUs each, pipeline stages " << range(h.first_stage, h.last_stage) << "\n";
    for (int k = 0; k < h.hosts; ++k) {
      o << host_name(h, h.first_host + k) << " slots=" << h.procs_per_host << " type=" << h.gpu << "\n";
    }
  }
  return o.str();
}

std::map<std::string, std::string> launch_env(const Scenario& s, const PlanSpec& p) {
  std::map<std::string, std::string> env;
  bool pre_blackwell = false;
  for (const auto& st : p.stages) {
    pre_blackwell = pre_blackwell || s.cluster.groups[st.group].gpu.cuda_arch < kCudaArchNoMaxConnections;
  }
  if (p.ep_comm_overlap) {
    // EP overlap runs the all-to-all on its own streams: more than one hardware queue (Megatron's
    // MoE README; validate_args only warns against TP/CP > 1 with it before Blackwell, and the plan
    // was priced with the all-to-all hidden). 32 as Megatron-Bridge's performance scripts set.
    env["CUDA_DEVICE_MAX_CONNECTIONS"] = "32";
  } else if ((p.tp > 1 || p.cp > 1) && pre_blackwell) {
    env["CUDA_DEVICE_MAX_CONNECTIONS"] = "1";
  }
  return env;
}

namespace {
void write_header(std::ostringstream& o, const std::vector<HostGroup>& hosts) {
  long long gpus = 0;
  for (const HostGroup& h : hosts) gpus += static_cast<long long>(h.hosts) * h.procs_per_host;
  o << "#!/bin/bash\n"
    << "# " << gpus << " GPUs on " << total_hosts(hosts) << " hosts. Run this script on every host of the "
    << "hostfile, from a Megatron-LM checkout,\n# with NODE_RANK = the host's line in the hostfile (0 = first) "
    << "and MASTER_ADDR = the first host's address.\n"
    << "set -euo pipefail\n"
    << ": \"${NODE_RANK:?set NODE_RANK to this host's line in the hostfile (0 = first)}\"\n"
    << ": \"${MASTER_ADDR:?set MASTER_ADDR to the first host of the hostfile}\"\n"
    << "MASTER_PORT=\"${MASTER_PORT:-6000}\"\n";
  for (const HostGroup& h : hosts) {
    if (h.vendor == "amd") o << "# " << h.gpu << ": AMD GPUs need ROCm builds of PyTorch and Megatron-LM (RCCL).\n";
    if (h.vendor == "huawei") o << "# " << h.gpu << ": Ascend NPUs need torch_npu and MindSpeed (HCCL).\n";
  }
}
}  // namespace

std::string launch_script(const ModelSpec& m, const std::vector<HostGroup>& hosts,
                          const std::map<std::string, std::string>& env, const std::string& args) {
  std::ostringstream o;
  write_header(o, hosts);
  const MegatronVersionNeed need = megatron_version_needed(args);
  o << "# Needs Megatron-LM " << need.release << " or newer"
    << (need.newest_flag.empty() ? std::string(" (every flag here is older)") : " (for " + need.newest_flag + ")") << ".\n";
  for (const auto& [k, v] : env) o << "export " << k << "=" << v << "\n";
  o << "ARGS=(" << args << ")\n"
    << "# Mock data and a null tokenizer with the model's vocabulary. For real data and the model's\n"
    << "# tokenizer, replace the DATA line with the two commented lines below it.\n"
    << "DATA=(" << mock_data_args(m) << ")\n"
    << "# DATA=(" << real_data_args() << ")\n"
    << "# DATA+=(" << hf_tokenizer_args(m) << ")\n";
  const int n = total_hosts(hosts);
  for (size_t i = 0; i < hosts.size(); ++i) {
    const HostGroup& h = hosts[i];
    o << (i == 0 ? "if" : "elif") << " [ \"$NODE_RANK\" -lt " << h.first_host + h.hosts << " ]; then  # "
      << h.gpu << ", pipeline stages " << range(h.first_stage, h.last_stage) << "\n"
      << "  torchrun --nnodes " << n << " --node-rank \"$NODE_RANK\" --nproc-per-node " << h.procs_per_host
      << " --master-addr \"$MASTER_ADDR\" --master-port \"$MASTER_PORT\" pretrain_gpt.py \"${ARGS[@]}\" "
         "\"${DATA[@]}\"\n";
  }
  o << "else\n  echo \"NODE_RANK must be 0 to " << n - 1 << "\" >&2\n  exit 1\nfi\n";
  return o.str();
}

}  // namespace hapmoe
