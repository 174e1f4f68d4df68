// Warm native search time of one scenario, for bench/wasm_bench.mjs's wasm/native ratio: the
// planner run once (start-up: presets, the allocator's first pages, caches), then RUNS times in
// the same process; prints the least stats.elapsed_ms of those runs, in ms. The wasm side is timed
// the same way (one module, warmed up), so the ratio compares the code, not a process's cold start
// (a cold native run of DeepSeek-V3 on mixed-2048 took 1.07 s, a warm one 0.47 s).
// usage: build/plan_timing FILE [RUNS]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "api.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: plan_timing FILE [RUNS]\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "plan_timing: cannot read %s\n", argv[1]);
    return 2;
  }
  std::stringstream text;
  text << in.rdbuf();
  const int runs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 1;
  auto elapsed_ms = [&] {
    const nlohmann::json r = nlohmann::json::parse(hapmoe::api::plan(text.str(), nullptr, true));
    if (!r.contains("stats")) {
      std::fprintf(stderr, "plan_timing: %s\n", r.dump().c_str());
      std::exit(1);
    }
    return r["stats"]["elapsed_ms"].get<double>();
  };
  elapsed_ms();  // warm-up
  double best = elapsed_ms();
  for (int i = 1; i < runs; ++i) best = std::min(best, elapsed_ms());
  std::printf("%.3f\n", best);
  return 0;
}
