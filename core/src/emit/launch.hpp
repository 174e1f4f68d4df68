// How a plan is started: the hosts in pipeline-stage order (hostfile), the environment and one
// torchrun line per host group. Megatron-LM orders ranks tp-cp-ep-dp-pp (megatron.md §1.1), so
// pipeline stage i holds global ranks [i*S, (i+1)*S) with S = tp*cp*dp; torchrun's static
// rendezvous numbers ranks host by host in --node-rank order, each host contributing its
// --nproc-per-node. Listing hosts in stage order therefore puts each stage on its GPU type.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "hapmoe/specs.hpp"

namespace hapmoe {

// Consecutive hosts of one node group that run the same number of processes: one torchrun line.
struct HostGroup {
  int group = 0;           // cluster group
  std::string gpu;         // its GPU id (hostfile type=)
  std::string vendor;
  int first_host = 0;      // node rank of the first host
  int hosts = 0;
  int procs_per_host = 0;  // torchrun --nproc-per-node
  int first_stage = 0;     // pipeline stages whose ranks these hosts hold
  int last_stage = 0;
};

// The plan's hosts in rank order. Each run of consecutive stages on one node group fills
// gpus_per_host GPUs per host; a remainder runs on one more host with fewer processes.
std::vector<HostGroup> launch_host_groups(const Scenario& s, const PlanSpec& p);

// "name slots=N type=GPU" per host, in node-rank order (FlagScale/DeepSpeed hostfile form),
// with a comment line per host group.
std::string hostfile_text(const std::vector<HostGroup>& hosts);

// Environment the run needs: CUDA_DEVICE_MAX_CONNECTIONS=1 with tp or cp > 1 before compute
// capability 10 (validate_args asserts it; with EP communication overlap it only warns and
// accepts 1, which keeps TP communication first). Otherwise unset: CUDA's default (8) already
// gives EP overlap the "more than one connection" the MoE README asks for.
std::map<std::string, std::string> launch_env(const Scenario& s, const PlanSpec& p);

// A bash script to run on every host with NODE_RANK and MASTER_ADDR set: the environment, the
// arguments (`args`, without data flags), mock data with the two commented lines to switch to
// real data and the model's tokenizer, and one torchrun line per host group.
std::string launch_script(const ModelSpec& m, const std::vector<HostGroup>& hosts,
                          const std::map<std::string, std::string>& env, const std::string& args);

}  // namespace hapmoe
