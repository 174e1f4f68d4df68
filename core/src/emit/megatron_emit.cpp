#include "emit/megatron_emit.hpp"

#include <sstream>
#include <vector>

#include "emit/launch.hpp"
#include "emit/megatron_args.hpp"

namespace hapmoe {

MegatronCommand megatron_command(const Scenario& s, const PlanSpec& p) {
  FlagList f;
  add_parallel_args(s, p, f);
  add_model_args(s.model, f);
  add_moe_args(s, p, f);
  add_precision_args(s, p, f);
  add_recompute_args(s.model, p, f);
  add_training_args(f);
  MegatronCommand cmd;
  cmd.env = launch_env(s, p);
  const std::vector<HostGroup> hosts = launch_host_groups(s, p);
  cmd.hostfile = hostfile_text(hosts);
  cmd.launch = launch_script(s.model, hosts, cmd.env, f.str());
  cmd.args = f.str() + " " + mock_data_args(s.model);
  if (s.training.fp8_dot_product_attention) {
    // arguments.py builds its flags from TransformerConfig but excludes this field.
    cmd.warnings.push_back(
        "FP8 attention (training.fp8_dot_product_attention) has no pretrain_gpt.py flag in Megatron-LM "
        "(arguments.py leaves TransformerConfig.fp8_dot_product_attention out of the command line): set "
        "it in your launcher (Megatron-Bridge: model.fp8_dot_product_attention=True); this plan's time "
        "assumes it");
  }
  return cmd;
}

}  // namespace hapmoe
