// libFuzzer target over the nccl-tests importer (core/include/hapmoe/profile_import.hpp): the
// input is the text of one or two nccl-tests outputs (a 0xff byte splits two files). Besides the
// API's promises (answer_check.hpp): what import-nccl prints must be a profile section a
// scenario accepts (`validate` of a scenario holding it), its points one per (op, ranks,
// placement, bytes), and each run's ranks no more than its rank lines.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <tuple>

#include "answer_check.hpp"
#include "api.hpp"
#include "hapmoe/profile_import.hpp"

using hapmoe_fuzz::require;
using nlohmann::json;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t cut = input.find('\xff');
  json files = json::array({{{"name", "a.txt"}, {"text", input.substr(0, cut)}}});
  if (cut != std::string::npos) files.push_back({{"name", "b.txt"}, {"text", input.substr(cut + 1)}});
  // Texts that are not UTF-8 cannot travel as JSON strings (the CLI replaces such bytes first).
  const std::string request = json{{"gpu", "h100-sxm"}, {"files", files}}.dump(-1, ' ', false, json::error_handler_t::replace);
  const json r = hapmoe_fuzz::check_answer(hapmoe::api::import_nccl(request));
  // The runs as the library reads them: never more ranks than rank lines.
  const auto runs = hapmoe::import_nccl_tests(input.substr(0, cut), {});
  if (runs) {
    for (const hapmoe::NcclRun& run : *runs) require(run.ranks >= 2 && run.points.size() == run.point_lines.size());
  }
  if (!r["ok"]) return 0;
  const json& points = r["profile"]["gpus"]["h100-sxm"]["collectives"];
  std::set<std::tuple<std::string, long long, std::string, double>> keys;
  for (const json& p : points) {
    require(keys.insert(std::make_tuple(p["op"].get<std::string>(), p["ranks"].get<long long>(),
                                        p["placement"].get<std::string>(), p["bytes"].get<double>()))
                .second);
  }
  const json scenario = {{"format", "hapmoe.scenario/1"}, {"model", "mixtral-s"},
                         {"cluster", {{"groups", json::array({{{"gpu", "h100-sxm"}, {"nodes", 2}}})}}},
                         {"training", {{"global_batch_size", 64}, {"seq_length", 2048}}},
                         {"profile", r["profile"]}};
  require(hapmoe_fuzz::check_answer(hapmoe::api::validate(scenario.dump()))["ok"] == true);
  return 0;
}
