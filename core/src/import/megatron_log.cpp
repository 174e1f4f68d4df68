// Megatron-LM training log -> iteration times and memory (profile_import.hpp). Format:
// megatron/training/training.py training_log() (" iteration N/ M | consumed samples: ... |
// elapsed time per iteration (ms): X | throughput per GPU (TFLOP/s/GPU): Y | ... | global batch
// size: B | ...") and megatron/training/utils.py report_memory() ("[Rank r] (after N iterations)
// memory (MB) | allocated: ... | max allocated: ... | reserved: ... | max reserved: ...").
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <unordered_map>

#include "hapmoe/profile_import.hpp"

namespace hapmoe {

namespace {

// Bounds of what a log line may say (hostile input; beyond them the numbers cannot be a run's):
// an iteration up to 10^8 ms (28 hours), throughput up to 10^5 TFLOP/s per GPU (50x a B200's
// FP8 peak), memory up to 10^9 MB (1 PB) per rank.
constexpr double kMaxIterationMs = 1e8, kMaxTflopsPerGpu = 1e5, kMaxMemoryMb = 1e9;

// The number right after `key` in `line` (spaces skipped), or nullopt.
std::optional<double> number_after(const std::string& line, const std::string& key) {
  const size_t at = line.find(key);
  if (at == std::string::npos) return std::nullopt;
  const char* start = line.c_str() + at + key.size();
  char* end = nullptr;
  const double v = std::strtod(start, &end);
  if (end == start || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string line_field(size_t line_no) { return "line " + std::to_string(line_no); }

// " iteration      10/     100 |": the iteration number, or nullopt when the line is not one.
std::optional<long long> iteration_number(const std::string& line) {
  const size_t at = line.find("iteration ");
  if (at == std::string::npos || line.find("elapsed time per iteration (ms):") == std::string::npos) return std::nullopt;
  const auto n = number_after(line, "iteration ");
  if (!n || *n < 0 || *n > 1e15) return std::nullopt;
  return static_cast<long long>(*n);
}

// `seen`: the index in log->iterations of each iteration number read so far.
Expected<bool> read_iteration(const std::string& line, size_t line_no, MegatronLog* log,
                              std::unordered_map<long long, size_t>* seen) {
  LoggedIteration it;
  it.iteration = *iteration_number(line);
  it.line = line_no;
  const auto ms = number_after(line, "elapsed time per iteration (ms):");
  if (!ms || *ms <= 0 || *ms > kMaxIterationMs) {
    return Error{"bad_value", "expected an elapsed time per iteration (ms) above 0 and at most 10^8", line_field(line_no)};
  }
  it.elapsed_ms = *ms;
  it.tflops_per_gpu = number_after(line, "throughput per GPU (TFLOP/s/GPU):").value_or(0);
  if (it.tflops_per_gpu < 0 || it.tflops_per_gpu > kMaxTflopsPerGpu) {
    return Error{"bad_value", "expected a throughput per GPU (TFLOP/s/GPU) from 0 to 10^5", line_field(line_no)};
  }
  const double gbs = number_after(line, "global batch size:").value_or(0);
  if (gbs < 0 || gbs > 1e15) return Error{"bad_value", "expected a global batch size from 0 to 10^15", line_field(line_no)};
  it.global_batch_size = static_cast<long long>(gbs);
  // A line logged again (a log given twice, or a restart that logs an iteration anew): the same
  // numbers are one measurement, kept once; other numbers for the same iteration are refused.
  const auto [known, fresh] = seen->emplace(it.iteration, log->iterations.size());
  if (!fresh) {
    const LoggedIteration& o = log->iterations[known->second];
    if (o.elapsed_ms == it.elapsed_ms && o.tflops_per_gpu == it.tflops_per_gpu && o.global_batch_size == it.global_batch_size) {
      ++log->repeated_iterations;
      return true;
    }
    return Error{"conflicting_points", "iteration " + std::to_string(it.iteration) +
                                           " is logged again with other numbers (first at line " + std::to_string(o.line) +
                                           "): two runs in one log? keep one run's lines",
                 line_field(line_no)};
  }
  log->iterations.push_back(it);
  return true;
}

Expected<bool> read_memory_entry(const std::string& line, size_t line_no, MegatronLog* log) {
  const auto rank = number_after(line, "[Rank ");
  const auto max_alloc = number_after(line, "max allocated:");
  const auto max_reserved = number_after(line, "max reserved:");
  if (!rank || !max_alloc || !max_reserved || *rank < 0 || *rank > 1e9) return true;  // 10^9 ranks: beyond any cluster
  if (*max_alloc < 0 || *max_alloc > kMaxMemoryMb || *max_reserved < 0 || *max_reserved > kMaxMemoryMb) {
    return Error{"bad_value", "expected max allocated and max reserved (MB) from 0 to 10^9", line_field(line_no)};
  }
  log->memory.push_back({static_cast<long long>(*rank), *max_alloc, *max_reserved});
  return true;
}

// Ranks print without a trailing newline, so one line may hold several "[Rank r] ..." entries.
Expected<bool> read_memory(const std::string& line, size_t line_no, MegatronLog* log) {
  for (size_t at = line.find("[Rank "); at != std::string::npos;) {
    const size_t next = line.find("[Rank ", at + 1);
    const auto r = read_memory_entry(line.substr(at, next == std::string::npos ? std::string::npos : next - at), line_no, log);
    if (!r) return r;
    at = next;
  }
  return true;
}

}  // namespace

Expected<MegatronLog> parse_megatron_log(const std::string& text) {
  if (text.size() > kMaxImportTextBytes) return Error{"too_large", "log above 8 MiB: keep the iteration and memory lines", "$"};
  MegatronLog log;
  std::unordered_map<long long, size_t> seen;
  std::istringstream in(text);
  size_t line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    // report_memory prints without a newline, so a memory line may run into the next line.
    if (line.find("memory (MB)") != std::string::npos) {
      const Expected<bool> r = read_memory(line, line_no, &log);
      if (!r) return r.error();
    }
    if (iteration_number(line)) {
      const Expected<bool> r = read_iteration(line, line_no, &log, &seen);
      if (!r) return r.error();
    }
    if (log.iterations.size() > 1000000) return Error{"too_many", "more than 10^6 iteration lines", line_field(line_no)};
  }
  if (log.iterations.empty()) {
    return Error{"bad_value", "no \"iteration N/ M | ... | elapsed time per iteration (ms): X |\" line found", "$"};
  }
  return log;
}

Expected<SteadyIteration> steady_iteration(const MegatronLog& log, std::optional<long long> warmup_iterations) {
  const long long warmup = warmup_iterations.value_or(log.iterations.front().iteration);
  std::vector<double> ms, tflops;
  SteadyIteration s;
  for (const LoggedIteration& it : log.iterations) {
    if (it.iteration <= warmup) {
      ++s.skipped;
      continue;
    }
    ms.push_back(it.elapsed_ms);
    if (it.tflops_per_gpu > 0) tflops.push_back(it.tflops_per_gpu);
  }
  if (ms.empty()) {
    return Error{"bad_value", "no iteration line after the warm-up (iteration <= " + std::to_string(warmup) +
                                  " skipped); log more iterations or lower the warm-up", "warmup"};
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : v[n / 2 - 1] / 2 + v[n / 2] / 2;  // halves first: no overflow
  };
  s.used = ms.size();
  s.median_ms = median(ms);
  s.median_tflops_per_gpu = tflops.empty() ? 0 : median(tflops);
  return s;
}

}  // namespace hapmoe
