// Ready-to-run Megatron-LM command line, launch script and hostfile for a plan (flag groups in
// megatron_args.hpp, hosts and environment in launch.hpp).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "emit/megatron_layout.hpp"
#include "hapmoe/specs.hpp"

namespace hapmoe {

struct MegatronCommand {
  std::string args;                        // every pretrain_gpt.py argument, mock data included
  std::map<std::string, std::string> env;  // required environment (also exported by launch)
  std::string launch;                      // bash script: env, data switch, torchrun per host group
  std::string hostfile;                    // hosts in pipeline-stage order (launch.hpp)
  std::vector<std::string> warnings;       // what the command cannot say and a user must do
};

MegatronCommand megatron_command(const Scenario& s, const PlanSpec& plan);

}  // namespace hapmoe
