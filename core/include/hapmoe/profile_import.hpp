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

// One nccl-tests run: its header, rank lines and table.
struct NcclRun {
  CollectiveOp op = CollectiveOp::kAllReduce;
  long long ranks = 0;       // distinct "#  Rank r" lines (= -g x -t x processes)
  Placement placement = Placement::kIntraNode;
  std::vector<std::string> hosts;  // distinct host names of the rank lines, in order
  std::string device;              // device name of the run's first rank line
  std::vector<CollectivePoint> points;  // one per table row: size (B), out-of-place busbw (GB/s)
  std::vector<size_t> point_lines;      // the text line of each point (1-based)
  size_t first_line = 0;                // where the run starts
};

// Reads nccl-tests output (all_reduce_perf, all_gather_perf, reduce_scatter_perf,
// alltoall_perf): runs, each a "# Collective test starting: X_perf" or "# nThread N nGpus G"
// header, the "#  Rank r Group g Pid p on HOST device d [bus] NAME" lines and the
// size/count/type/redop/root/time/algbw/busbw table. Several runs in one text (outputs joined,
// one after another) stay apart: each has its own op, ranks and hosts. A row outside the
// profile's bounds (profile_io.hpp), a size twice in one run, a rank listed twice in one run or
// an op that contradicts options.op is an error; fields name the line ("line 12").
Expected<std::vector<NcclRun>> import_nccl_tests(const std::string& text, const NcclImportOptions& options);

// One run with the text it came from: its name (for messages) and the field errors name.
struct NamedNcclRun {
  std::string file, field;
  const NcclRun* run = nullptr;
};

// The points of every run, each (op, ranks, placement, bytes) once. A point measured again with
// the same busbw is dropped and counted in (*repeated)[run] (the same output given twice); with
// another busbw it is an error naming both lines (field: the later run's).
Expected<std::vector<CollectivePoint>> merge_nccl_runs(const std::vector<NamedNcclRun>& runs,
                                                       std::vector<size_t>* repeated);

// One "iteration N/ M | ... |" line of a Megatron-LM training log.
struct LoggedIteration {
  long long iteration = 0;
  double elapsed_ms = 0;         // "elapsed time per iteration (ms)" (mean over the log interval)
  double tflops_per_gpu = 0;     // "throughput per GPU (TFLOP/s/GPU)"; 0 when not logged
  long long global_batch_size = 0;  // "global batch size"; 0 when not logged
  size_t line = 0;                  // its line in the log (1-based)
};

// One "[Rank r] (after N iterations) memory (MB) | allocated: ... | max reserved: ..." line.
struct LoggedMemory {
  long long rank = 0;
  double max_allocated_mb = 0, max_reserved_mb = 0;  // MB = 2^20 bytes (Megatron's report_memory)
};

struct MegatronLog {
  std::vector<LoggedIteration> iterations;  // each iteration once
  std::vector<LoggedMemory> memory;
  size_t repeated_iterations = 0;  // lines that logged an iteration again with the same numbers
};

// Reads the iteration and memory lines of a Megatron-LM log; other lines are skipped. Fails when
// no iteration line is found, on numbers beyond any run (an iteration over 10^8 ms, over 10^5
// TFLOP/s per GPU, memory over 10^9 MB) and on an iteration logged twice with other numbers
// (the same numbers again are counted in repeated_iterations and kept once).
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
