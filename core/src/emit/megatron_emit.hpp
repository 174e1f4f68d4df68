// Ready-to-run Megatron-LM command line, launch script and hostfile for a plan (flag groups in
// megatron_args.hpp, hosts and environment in launch.hpp).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "hapmoe/specs.hpp"

namespace hapmoe {

struct MegatronCommand {
  std::string args;                        // every pretrain_gpt.py argument, mock data included
  std::map<std::string, std::string> env;  // required environment (also exported by launch)
  std::string launch;                      // bash script: env, data switch, torchrun per host group
  std::string hostfile;                    // hosts in pipeline-stage order (launch.hpp)
  std::vector<std::string> warnings;       // what the command cannot say and a user must do
};

// --pipeline-model-parallel-layout for the plan's layer split ("" when Megatron's default even
// split matches). Stage i's layers are split over its vpp chunks as evenly as possible, earlier
// chunks taking the remainder; E (embedding) opens the first chunk, MTP layers and L (loss)
// close the last one (megatron.md §1.2 grammar).
std::string pipeline_layout(const ModelSpec& m, const PlanSpec& plan);

// "([0]*3+[1]*58)"-style --moe-layer-freq expression for a 0/1 layer pattern.
std::string moe_layer_freq_expression(const std::vector<int>& pattern);

MegatronCommand megatron_command(const Scenario& s, const PlanSpec& plan);

}  // namespace hapmoe
