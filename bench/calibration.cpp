// Prints predicted vs published throughput for the calibration rows of
// shared/reference/calibration.md (examples/c*.json), one set of constants per GPU type.
// Exit status 1 if any row is off by more than 20%.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "api.hpp"

namespace {
struct Row {
  const char* id;
  const char* file;
  const char* metric;  // "tflops_per_gpu" or "tokens_per_s_per_gpu"
  double published;
  const char* source;
};
// Published values (calibration.md); the model never sees them.
const Row kRows[] = {
    {"C1", "c1-mixtral-8x7b-h100-64.json", "tflops_per_gpu", 468, "Megatron-LM MoE README (MCore v0.9)"},
    {"C2", "c2-gpt-oss-120b-h100-64.json", "tokens_per_s_per_gpu", 5993, "Megatron-Bridge perf summary 26.02"},
    {"C3", "c3-qwen3-30b-a3b-h100-16.json", "tokens_per_s_per_gpu", 5113, "Megatron-Bridge perf summary 26.02"},
    {"C4", "c4-qwen3-235b-a22b-h100-256.json", "tokens_per_s_per_gpu", 1633, "Megatron-Bridge perf summary 26.02"},
    {"C5", "c5-deepseek-v3-gb200-256.json", "tokens_per_s_per_gpu", 3955, "Megatron-Bridge perf summary 26.02"},
};
}  // namespace

int main() {
  int bad = 0;
  std::printf("%-4s %-34s %-22s %10s %10s %8s  %s\n", "row", "scenario", "metric", "predicted", "published", "error",
              "fits memory");
  for (const Row& r : kRows) {
    std::ifstream f(std::string(HAPMOE_SOURCE_DIR) + "/examples/" + r.file);
    std::stringstream ss;
    ss << f.rdbuf();
    const auto result = nlohmann::json::parse(hapmoe::api::evaluate(ss.str()));
    if (!result.value("ok", false)) {
      std::printf("%-4s %s: %s\n", r.id, r.file, result["error"].dump().c_str());
      ++bad;
      continue;
    }
    const auto& m = result["plans"][0]["metrics"];
    const double predicted = m[r.metric].get<double>();
    const double err = (predicted - r.published) / r.published;
    bad += std::fabs(err) > 0.20 ? 1 : 0;
    std::printf("%-4s %-34s %-22s %10.1f %10.1f %+7.1f%%  %s\n", r.id, r.file, r.metric, predicted, r.published,
                100 * err, m["fits_memory"].get<bool>() ? "yes" : "NO");
  }
  std::printf("%s\n", bad ? "some rows are off by more than 20%" : "all rows within 20%");
  return bad ? 1 : 0;
}
