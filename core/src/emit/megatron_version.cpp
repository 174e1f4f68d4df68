#include "emit/megatron_version.hpp"

#include <cstring>

namespace hapmoe {

namespace {
// Releases are ordered by their index here; a flag's release is the first Megatron-LM core release
// whose arguments.py parses it (MCore release notes and the MoE README's "What's New": the HybridEP
// backend of the flex dispatcher and the cuda-graph-impl switch in v0.15, EP-overlap in v0.14, the
// pipeline layout in v0.13). Checked flag by flag against Megatron-LM commit d98e8a6 by
// tests/megatron_args_check.mjs, which is newer than all of them.
// The rank capacity factor and the paged stash are newer than v0.15 (the main branch at d98e8a6);
// the exact first release of each flag is from the release notes, not bisected.
constexpr const char* kReleases[] = {"core_r0.12.0", "core_r0.13.0", "core_r0.14.0", "core_r0.15.0",
                                     "the main branch after core_r0.15.0 (commit d98e8a6 or later)"};
constexpr int kBaselineRelease = 0;

struct FlagRelease {
  const char* flag;
  int release;  // index into kReleases
};
constexpr FlagRelease kFlagReleases[] = {
    {"--pipeline-model-parallel-layout", 1},
    {"--overlap-moe-expert-parallel-comm", 2},
    {"--delay-wgrad-compute", 2},
    {"--moe-router-padding-for-quantization", 2},
    {"--moe-flex-dispatcher-backend", 3},
    {"--moe-hybridep-num-sms", 3},
    {"--cuda-graph-impl", 3},
    {"--cuda-graph-modules", 3},
    {"--moe-expert-rank-capacity-factor", 4},
    {"--moe-paged-stash", 4},
};

// Whether args holds flag as a whole token.
bool has_flag(const std::string& args, const char* flag) {
  const size_t n = std::strlen(flag);
  for (size_t at = args.find(flag); at != std::string::npos; at = args.find(flag, at + 1)) {
    const bool starts = at == 0 || args[at - 1] == ' ' || args[at - 1] == '\n' || args[at - 1] == '(';
    const bool ends = at + n == args.size() || args[at + n] == ' ' || args[at + n] == '\n' || args[at + n] == '=';
    if (starts && ends) return true;
  }
  return false;
}
}  // namespace

MegatronVersionNeed megatron_version_needed(const std::string& args) {
  int need = kBaselineRelease;
  std::string flag;
  for (const FlagRelease& f : kFlagReleases) {
    if (f.release > need && has_flag(args, f.flag)) {
      need = f.release;
      flag = f.flag;
    }
  }
  return {kReleases[need], flag};
}

}  // namespace hapmoe
