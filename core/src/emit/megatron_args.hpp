// The pretrain_gpt.py argument groups of a plan (flag names checked against Megatron-LM's
// arguments.py and TransformerConfig, megatron.md §1). Each function returns space-joined
// "--flag [value]" pieces in shell syntax (values with | * ( ) are double-quoted).
#pragma once

#include <string>

#include "hapmoe/specs.hpp"

namespace hapmoe {

// Training-length defaults of the emitted launch: a short trial run that measures the plan
// (raise --train-iters for real training). Learning rate and schedule follow Megatron-LM's
// examples/mixtral recipe (lr 1e-4 to 1e-5, cosine, weight decay 0.1, clip 1.0).
inline constexpr int kTrainIters = 100;
inline constexpr int kLrWarmupIters = 10;
inline constexpr int kLogInterval = 10;
inline constexpr const char* kLr = "1e-4";
inline constexpr const char* kMinLr = "1e-5";

// Space-joined flags, built one "--flag [value]" at a time.
class FlagList {
 public:
  void add(const std::string& flag);
  void add(const std::string& flag, const std::string& value);
  void add(const std::string& flag, long long value);
  void add_number(const std::string& flag, double value);  // shortest exact-enough decimal
  const std::string& str() const { return text_; }

 private:
  std::string text_;
};

// TP, PP, CP, EP, ETP, SP, layout or VPP, batch sizes, sequence length.
void add_parallel_args(const Scenario& s, const PlanSpec& p, FlagList& f);
// Model shape and architecture: layers, widths, attention kind, activation, normalization,
// position embedding, biases, MTP (from ModelSpec; nothing hard-coded).
void add_model_args(const ModelSpec& m, FlagList& f);
// Experts, routing (score function, bias, scaling, balancing), dispatcher, overlap.
void add_moe_args(const Scenario& s, const PlanSpec& p, FlagList& f);
// Distributed optimizer, overlaps, BF16/FP8 (recipe from fp8_recipe_for), precision-aware
// optimizer, CUDA graphs.
void add_precision_args(const Scenario& s, const PlanSpec& p, FlagList& f);
// --cuda-graph-impl and --cuda-graph-modules of the plan's graphs, with the flags they need.
void add_cuda_graph_args(const CudaGraphs& g, FlagList& f);
// The plan's recompute (one setting for all stages in upstream Megatron-LM).
void add_recompute_args(const ModelSpec& m, const PlanSpec& p, FlagList& f);
// Iterations, learning-rate schedule, logging, no evaluation (the constants above).
void add_training_args(FlagList& f);
// Mock data and the null tokenizer with the model's vocabulary (Megatron's NullTokenizer has
// exactly --vocab-size ids, the last one end-of-document).
std::string mock_data_args(const ModelSpec& m);
// The two lines' worth of flags for real data and the model's Hugging Face tokenizer.
std::string real_data_args();
std::string hf_tokenizer_args(const ModelSpec& m);

}  // namespace hapmoe
