#include "profile_cmd.hpp"

#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "api.hpp"
#include "hapmoe/json_text.hpp"
#include "int_arg.hpp"
#include "hapmoe/profile_import.hpp"

namespace hapmoe_cli {

using nlohmann::json;

namespace {

// Iteration numbers above this are not read from a log either (megatron_log.cpp).
constexpr long long kMaxWarmupIterations = 1'000'000'000'000'000LL;

int fail(const std::string& msg) {
  std::cerr << "hapmoe profile: " << hapmoe::to_valid_utf8(msg) << "\nusage:\n" << kProfileUsage;
  return 2;
}

bool read_file(const std::string& path, std::string* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out->assign(hapmoe::kMaxImportTextBytes + 1, '\0');
  f.read(&(*out)[0], static_cast<std::streamsize>(out->size()));
  out->resize(static_cast<size_t>(f.gcount()));
  return !f.bad();
}

// Splits "--key value" options (from `valued`) from positional arguments.
bool split_args(const std::vector<std::string>& args, const std::vector<std::string>& valued,
                std::map<std::string, std::string>* opts, std::vector<std::string>* pos, std::string* err) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() > 2 && a.compare(0, 2, "--") == 0) {
      const std::string key = a.substr(2);
      if (std::find(valued.begin(), valued.end(), key) == valued.end()) {
        *err = "unknown option " + a;
        return false;
      }
      if (i + 1 >= args.size()) {
        *err = a + " needs a value";
        return false;
      }
      // Values travel as JSON text: ill-formed UTF-8 is refused, not replaced behind the user's back.
      if (hapmoe::first_invalid_utf8(args[i + 1]) != std::string::npos) {
        *err = a + " needs UTF-8 text, got ill-formed bytes: \"" + args[i + 1] + "\"";
        return false;
      }
      (*opts)[key] = args[++i];
    } else {
      pos->push_back(a);
    }
  }
  return true;
}

int print_result(const std::string& out) {
  const json r = json::parse(out);
  if (r.value("ok", false)) {
    std::cout << r.dump(2) << "\n";
    return 0;
  }
  const json& e = r["error"];
  std::cerr << "hapmoe profile: " << e.value("field", "") << ": " << e.value("message", "") << " ["
            << e.value("code", "") << "]\n";
  return e.value("code", "") == "internal" ? 1 : 2;
}

int import_nccl(const std::vector<std::string>& args) {
  std::map<std::string, std::string> opts;
  std::vector<std::string> files;
  std::string err;
  if (!split_args(args, {"gpu", "placement", "op"}, &opts, &files, &err)) return fail(err);
  if (files.empty()) return fail("import-nccl needs at least one nccl-tests output file");
  if (!opts.count("gpu")) return fail("import-nccl needs --gpu ID (the GPU id the points belong to)");
  json request = {{"gpu", opts["gpu"]}, {"files", json::array()}};
  if (opts.count("placement")) request["placement"] = opts["placement"];
  if (opts.count("op")) request["op"] = opts["op"];
  for (const std::string& f : files) {
    std::string text;
    if (!read_file(f, &text)) return fail("cannot read " + f);
    request["files"].push_back({{"name", f}, {"text", text}});
  }
  return print_result(hapmoe::api::import_nccl(request.dump(-1, ' ', false, json::error_handler_t::replace)));
}

int import_log(const std::vector<std::string>& args) {
  std::map<std::string, std::string> opts;
  std::vector<std::string> logs;
  std::string err;
  if (!split_args(args, {"scenario", "gpu", "warmup"}, &opts, &logs, &err)) return fail(err);
  if (logs.size() != 1) return fail("import-log needs one Megatron-LM log file");
  if (!opts.count("scenario")) return fail("import-log needs --scenario FILE (the run's scenario with its plan)");
  std::string log, scenario;
  if (!read_file(logs[0], &log)) return fail("cannot read " + logs[0]);
  if (!read_file(opts["scenario"], &scenario)) return fail("cannot read " + opts["scenario"]);
  auto doc = hapmoe::parse_json_text(scenario);
  if (!doc) return fail(opts["scenario"] + ": " + doc.error().message);
  json request = {{"scenario", doc.value()}, {"log", log}, {"log_name", logs[0]}};
  if (opts.count("gpu")) request["gpu"] = opts["gpu"];
  if (opts.count("warmup")) {
    const auto n = parse_int_arg(opts["warmup"], 0, kMaxWarmupIterations);
    if (!n) return fail(int_arg_message("--warmup", 0, kMaxWarmupIterations, opts["warmup"]));
    request["warmup_iterations"] = *n;
  }
  return print_result(hapmoe::api::import_log(request.dump(-1, ' ', false, json::error_handler_t::replace)));
}

}  // namespace

int cmd_profile(const std::vector<std::string>& args) {
  if (args.empty()) return fail("profile needs import-nccl or import-log");
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "import-nccl") return import_nccl(rest);
  if (args[0] == "import-log") return import_log(rest);
  return fail("unknown profile command \"" + args[0] + "\"");
}

}  // namespace hapmoe_cli
