// `hapmoe profile import-nccl ...` and `hapmoe profile import-log ...` (README, "Profiles").
#pragma once

#include <string>
#include <vector>

namespace hapmoe_cli {

inline constexpr const char* kProfileUsage =
    "  hapmoe profile import-nccl FILE... --gpu ID [--placement P] [--op OP]\n"
    "                               nccl-tests outputs -> {\"profile\": ...} to merge into a scenario\n"
    "                               (P: intra_node|inter_node|inter_group, default from the hosts;\n"
    "                               OP: all_reduce|all_gather|reduce_scatter|all_to_all, default\n"
    "                               from the output's test name)\n"
    "  hapmoe profile import-log LOG --scenario FILE [--gpu ID] [--warmup N]\n"
    "                               fit the GPU's efficiency factors (and reserved memory) to a\n"
    "                               Megatron-LM log of FILE's plan; prints the fitted scenario and fit\n";

// args: everything after `hapmoe profile`. Returns the exit status (0, 2 invalid input, 1 internal).
int cmd_profile(const std::vector<std::string>& args);

}  // namespace hapmoe_cli
