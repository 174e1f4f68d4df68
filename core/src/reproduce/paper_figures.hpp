// The HAPMoE paper's evaluation as published (arXiv 2609.39350; our notes in
// reference/hapmoe_and_prior_work.md §1.5-1.6): the Table 1 cluster ids, the Table 2 geometric
// means and the Table 3 ablation, verbatim, and the training setup §5.1 states per model.
// Nothing here is computed by us; `hapmoe reproduce` puts our figures beside these.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace hapmoe {

inline constexpr const char* kPaperSource =
    "HAPMoE, arXiv 2609.39350v1 (https://arxiv.org/abs/2609.39350), §5.1 and Tables 1-3";

// Table 1, in the paper's order (preset ids of presets/clusters.json).
const std::vector<std::string>& paper_clusters();

// Table 2: geometric mean over the heterogeneous MoE clusters, normalised to Megatron-Infinigence.
struct PaperTable2Row {
  std::string model;   // preset id: "mixtral-s" | "mixtral-l"
  std::string method;  // "megatron_infinigence" | "hetermoe_style" | "metis_style" | "hapmoe"
  double throughput, mfu, latency;  // x MI
};
const std::vector<PaperTable2Row>& paper_table2();
std::optional<PaperTable2Row> paper_table2_row(const std::string& model, const std::string& method);

// Table 3: latency and throughput with non-uniform PP/DP disabled, relative to HAPMoE. The paper
// does not say which model the table is for.
struct PaperTable3Row {
  std::string cluster;
  double latency, throughput;  // x HAPMoE
};
const std::vector<PaperTable3Row>& paper_table3();
std::optional<PaperTable3Row> paper_table3_row(const std::string& cluster);

// The training setup of §5.1 for one of the paper's models; `assumed` lists what the paper does
// not state for that model and we set ourselves.
struct PaperTrainingSetup {
  std::string model;
  long long global_batch_size = 0;
  int seq_length = 0;
  int micro_batch_size = 0;
  std::string dispatcher;  // Megatron --moe-token-dispatcher-type
  std::string precision;
  bool distributed_optimizer = true;
  std::vector<std::string> assumed;
  std::string stated;  // the paper's words
};
const std::vector<PaperTrainingSetup>& paper_training_setups();

}  // namespace hapmoe
