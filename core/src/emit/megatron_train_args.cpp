// Precision, recompute, training length and data flags of the emitted command.
#include <vector>

#include "hapmoe/hardware.hpp"
#include "emit/megatron_args.hpp"
#include "spec/recompute.hpp"

namespace hapmoe {

void add_precision_args(const Scenario& s, const PlanSpec& p, FlagList& f) {
  const TrainingSpec& t = s.training;
  if (t.use_distributed_optimizer) f.add("--use-distributed-optimizer");
  if (t.overlap_grad_reduce) f.add("--overlap-grad-reduce");
  if (t.overlap_param_gather) f.add("--overlap-param-gather");
  f.add("--bf16");
  if (t.precision == Precision::kFp8) {
    std::vector<const GpuSpec*> gpus;
    for (const auto& st : p.stages) gpus.push_back(&s.cluster.groups[st.group].gpu);
    // rule_fp8_recipe_supported keeps plans whose GPUs share no recipe out; "tensorwise" is
    // only reached by a plan evaluated without the rules.
    std::string recipe = fp8_recipe_for(t.fp8_recipe, gpus);
    if (recipe.empty()) recipe = "tensorwise";
    // E4M3 everywhere for the block-scaled recipes (DeepSeek-V3's fine-grained FP8, NVIDIA's
    // MXFP8 recipe); E4M3 forward / E5M2 gradients ("hybrid") for per-tensor scaling.
    f.add("--fp8-format", recipe == "tensorwise" ? "hybrid" : "e4m3");
    f.add("--fp8-recipe", recipe);
    if (t.fp8_param_gather) f.add("--fp8-param-gather");
  }
  if (t.grad_reduce_in_bf16) f.add("--grad-reduce-in-bf16");
  if (t.optimizer.precision_aware) {
    f.add("--use-precision-aware-optimizer");
    f.add("--main-grads-dtype", t.optimizer.main_grads_dtype);
    f.add("--main-params-dtype", t.optimizer.main_params_dtype);
    f.add("--exp-avg-dtype", t.optimizer.exp_avg_dtype);
    f.add("--exp-avg-sq-dtype", t.optimizer.exp_avg_sq_dtype);
  }
  if (p.optimizer_offload_fraction > 0) {
    // Megatron's CPU offload reuses the precision-aware optimizer's code path (validate_args).
    if (!t.optimizer.precision_aware) f.add("--use-precision-aware-optimizer");
    f.add("--optimizer-cpu-offload");
    f.add_number("--optimizer-offload-fraction", p.optimizer_offload_fraction);
    f.add("--overlap-cpu-optimizer-d2h-h2d");
  }
  add_cuda_graph_args(p.cuda_graphs, f);  // (FP8 attention has no flag: a plan warning)
}

void add_cuda_graph_args(const CudaGraphs& g, FlagList& f) {
  if (!g.any()) return;
  f.add("--cuda-graph-impl", to_string(g.impl));
  if (g.per_layer() && g.modules != 0) {
    std::string modules;
    for (int i = 0; i < kGraphModuleCount; ++i) {
      if (g.modules & (1u << i)) modules += (modules.empty() ? "" : " ") + std::string(graph_module_name(i));
    }
    f.add("--cuda-graph-modules", modules);
  }
  // Megatron-LM d98e8a6: full-iteration graphs are their own implementation (the older
  // "--cuda-graph-impl local --cuda-graph-scope full_iteration" is migrated to it), and
  // validate_args requires the NaN check off with them; every implementation uses TE's RNG
  // tracker (validate_args turns it on with a warning otherwise).
  if (g.impl == GraphImpl::kFullIteration) f.add("--no-check-for-nan-in-loss-and-grad");
  f.add("--te-rng-tracker");
}

// The modules the cost model priced, in Megatron's order (one setting for all stages upstream).
void add_recompute_args(const ModelSpec&, const PlanSpec& p, FlagList& f) {
  const Recompute rc = p.stages.empty() ? Recompute::kNone : p.stages.front().recompute;
  if (rc.kind == Recompute::Kind::kSelective) {
    std::string modules;
    for (int i = 0; i < kRecomputeModuleCount; ++i) {
      if (rc.modules & (1u << i)) modules += (modules.empty() ? "" : " ") + std::string(recompute_module_name(i));
    }
    f.add("--recompute-granularity selective --recompute-modules", modules);
  } else if (rc.full()) {
    f.add("--recompute-granularity full --recompute-method uniform --recompute-num-layers 1");
  }
}

void add_training_args(FlagList& f) {
  f.add("--train-iters", kTrainIters);
  f.add("--lr", kLr);
  f.add("--min-lr", kMinLr);
  f.add("--lr-decay-style", "cosine");
  f.add("--lr-warmup-iters", kLrWarmupIters);
  f.add("--weight-decay", "0.1");
  f.add("--clip-grad", "1.0");
  f.add("--log-interval", kLogInterval);
  f.add("--log-throughput");
  // eval_iters 0 turns validation off (training.py: do_valid needs eval_iters > 0).
  f.add("--eval-iters", 0);
}

std::string mock_data_args(const ModelSpec& m) {
  return "--mock-data --tokenizer-type NullTokenizer --vocab-size " + std::to_string(m.vocab_size);
}

std::string real_data_args() { return "--data-path /path/to/dataset_text_document --split 99,1,0"; }

std::string hf_tokenizer_args(const ModelSpec& m) {
  const std::string id = m.tokenizer_model.empty() ? "/path/to/hf-tokenizer" : m.tokenizer_model;
  return "--tokenizer-type HuggingFaceTokenizer --tokenizer-model " + id;
}

}  // namespace hapmoe
