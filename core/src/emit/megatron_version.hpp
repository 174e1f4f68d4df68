// The oldest Megatron-LM release whose parser has every flag of an argument string.
#pragma once

#include <string>

namespace hapmoe {

struct MegatronVersionNeed {
  std::string release;      // e.g. "core_r0.15.0"
  std::string newest_flag;  // the flag that needs it ("" when only long-standing flags are used)
};

// args: a pretrain_gpt.py argument string. Releases from the flags' first appearance in
// megatron/training/arguments.py (see kFlagReleases in the .cpp); flags not listed are older than
// kBaselineRelease.
MegatronVersionNeed megatron_version_needed(const std::string& args);

}  // namespace hapmoe
