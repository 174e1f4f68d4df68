// The cost model against published runs (calibration/runs.json: shared/reference/calibration.md
// rows C1-C23 with their recipe settings, and further published runs of the same sources), and
// the fit of its few free parameters (calibration/parameters.json).
//
//   build/calibration            predictions with the presets' constants, the pairs, exit 1 if a
//                                row does not fit in memory or a named pair is ordered wrongly
//   build/calibration --loo      also refit and report leave-one-out errors (nothing written)
//   build/calibration --fit      refit, report, and write the fitted constants and the error
//                                bands into presets/gpus.json (rebuild to use them)
//   --check                      with --loo: exit 1 unless the acceptance figures hold
//
// A run is predicted with its published layout (evaluate), or, where a setting was not published,
// by a search restricted to the published mesh. The model never sees the published numbers but
// through this fit.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "calibration_fit.hpp"

namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace hapmoe::calibration;
  bool fit = false, loo = false, check = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--fit")) fit = loo = true;
    else if (!std::strcmp(argv[i], "--loo")) loo = true;
    else if (!std::strcmp(argv[i], "--check")) check = true;
    else {
      std::fprintf(stderr, "usage: calibration [--loo | --fit] [--check]\n");
      return 2;
    }
  }
  const std::string dir = std::string(HAPMOE_SOURCE_DIR);
  Calibration c;
  std::string error;
  if (!c.load(read_file(dir + "/calibration/runs.json"), read_file(dir + "/calibration/parameters.json"), &error)) {
    std::fprintf(stderr, "calibration: %s\n", error.c_str());
    return 2;
  }
  Report r = c.report(loo);
  print_report(c, r, stdout);
  if (fit) {
    const std::string path = dir + "/presets/gpus.json";
    std::string text = read_file(path);
    if (!write_fitted_presets(c, r, &text, &error)) {
      std::fprintf(stderr, "calibration: %s\n", error.c_str());
      return 2;
    }
    std::ofstream(path) << text;
    std::printf("wrote the fitted constants and error bands into presets/gpus.json (rebuild to use them)\n");
  }
  bool ok = r.all_fit_memory && r.named_pairs_ordered;
  if (check && loo) ok = ok && acceptance_holds(r);
  return ok ? 0 : 1;
}
