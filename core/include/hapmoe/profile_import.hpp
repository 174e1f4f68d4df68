// Importers that turn what people already have into the scenario's `profile` section and GPU
// overrides: nccl-tests output tables (collective bus bandwidth by message size) and Megatron-LM
// training logs (iteration time and memory lines). Text in, values out; never throws.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hapmoe/error.hpp"
#include "hapmoe/profile.hpp"

namespace hapmoe {

// Largest text an importer reads (one nccl-tests run or a log excerpt; logs can be trimmed).
inline constexpr size_t kMaxImportTextBytes = 8u << 20;

struct NcclImportOptions {
  std::optional<CollectiveOp> op;         // default: from "Collective test starting: X_perf"
  std::optional<Placement> placement;     // default: intra_node on one host, inter_node on several
};

struct NcclImport {
  CollectiveOp op = CollectiveOp::kAllReduce;
  long long ranks = 0;       // "#  Rank" lines (= -g x -t x processes)
  Placement placement = Placement::kIntraNode;
  std::vector<std::string> hosts;  // distinct host names of the rank lines, in order
  std::string device;              // device name of rank 0's line
  std::vector<CollectivePoint> points;  // one per table row: size (B), out-of-place busbw (GB/s)
};

// Reads one nccl-tests run (all_reduce_perf, all_gather_perf, reduce_scatter_perf,
// alltoall_perf): the "# nThread N nGpus G" header, the "#  Rank r Group g Pid p on HOST device
// d [bus] NAME" lines and the size/count/type/redop/root/time/algbw/busbw table. Error fields
// name the line ("line 12").
Expected<NcclImport> import_nccl_tests(const std::string& text, const NcclImportOptions& options);

// One "iteration N/ M | ... |" line of a Megatron-LM training log.
struct LoggedIteration {
  long long iteration = 0;
  double elapsed_ms = 0;         // "elapsed time per iteration (ms)" (mean over the log interval)
  double tflops_per_gpu = 0;     // "throughput per GPU (TFLOP/s/GPU)"; 0 when not logged
  long long global_batch_size = 0;  // "global batch size"; 0 when not logged
};

// One "[Rank r] (after N iterations) memory (MB) | allocated: ... | max reserved: ..." line.
struct LoggedMemory {
  long long rank = 0;
  double max_allocated_mb = 0, max_reserved_mb = 0;  // MB = 2^20 bytes (Megatron's report_memory)
};

struct MegatronLog {
  std::vector<LoggedIteration> iterations;
  std::vector<LoggedMemory> memory;
};

// Reads the iteration and memory lines of a Megatron-LM log; other lines are skipped. Fails when
// no iteration line is found.
Expected<MegatronLog> parse_megatron_log(const std::string& text);

// Steady-state iteration time: the median of the logged elapsed times of the lines with
// iteration > warmup_iterations (default: after the first logged line).
struct SteadyIteration {
  double median_ms = 0;
  double median_tflops_per_gpu = 0;  // 0 when not logged
  size_t used = 0, skipped = 0;
};
Expected<SteadyIteration> steady_iteration(const MegatronLog& log, std::optional<long long> warmup_iterations);

const char* collective_perf_name(CollectiveOp op);  // "all_reduce_perf", ..., "alltoall_perf"

}  // namespace hapmoe
