#include "reproduce_table.hpp"

#include <cstdio>
#include <string>

namespace hapmoe::cli {

using nlohmann::json;

namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// "1.23 [1.67]": our ratio and the paper's, "-" where absent.
std::string ratio_text(const json& value, const json& paper) {
  std::string s = value.is_number() ? fixed(value.get<double>(), 2) : "-";
  if (paper.is_object()) s += " [" + fixed(paper["value"].get<double>(), 2) + "]";
  return s;
}

void print_setups(const json& r) {
  std::printf("Training setup (paper §5.1; model and cluster presets of this planner):\n");
  for (const auto& t : r["setups"]) {
    std::string assumed;
    for (const auto& a : t["assumed"])
      assumed += (assumed.empty() ? "" : ", ") + a.get<std::string>();
    std::printf(
        "  %-10s GBS %lld sequences, seq %d tokens, micro-batch %d, %s dispatcher, %s, %s%s\n",
        t["model"].get<std::string>().c_str(), t["global_batch_size"].get<long long>(),
        t["seq_length"].get<int>(), t["micro_batch_size"].get<int>(),
        t["moe_token_dispatcher_type"].get<std::string>().c_str(),
        t["precision"].get<std::string>().c_str(),
        t["use_distributed_optimizer"].get<bool>() ? "distributed optimizer"
                                                   : "no distributed optimizer",
        assumed.empty() ? "" : ("  (assumed: " + assumed + ")").c_str());
  }
}

void print_header(const json& cols) {
  std::printf("\n%-10s %-7s %10s %11s", "model", "cluster", "ours iter", "ours tok/s");
  for (const auto& c : cols)
    std::printf("  %-24s", ("vs " + c["label"].get<std::string>()).c_str());
  std::printf("\n");
}

void print_rows(const json& r) {
  const json& cols = r["columns"];
  for (const auto& row : r["rows"]) {
    const json& ours = row["ours"];
    std::printf("%-10s %-7s %10s %11s", row["model"].get<std::string>().c_str(),
                row["cluster"].get<std::string>().c_str(),
                ours.is_null() ? "no plan"
                               : (fixed(ours["iteration_time_s"].get<double>(), 2) + " s").c_str(),
                ours.is_null() ? "-" : fixed(ours["tokens_per_s"].get<double>(), 0).c_str());
    for (const auto& c : cols) {
      const json& cell = row["columns"][c["id"].get<std::string>()];
      std::string text = ratio_text(cell["throughput_ratio"], cell["paper"]);
      if (cell["result"].is_null() && !ours.is_null()) text += " (no plan)";
      std::printf("  %-24s", text.c_str());
    }
    std::printf("\n");
  }
}

void print_geomeans(const json& r) {
  std::printf(
      "\ngeometric mean over heterogeneous clusters (Table 2's scope; clusters with both plans / "
      "run):\n");
  for (const auto& c : r["columns"]) {
    for (const auto& g : r["geomeans"]) {
      if (g["column"] != c["id"]) continue;
      std::printf("  %-10s ours vs %-20s %-14s (%zu/%d)\n", g["model"].get<std::string>().c_str(),
                  c["label"].get<std::string>().c_str(), ratio_text(g["value"], g["paper"]).c_str(),
                  g["clusters"].size(), g["of"].get<int>());
    }
  }
}

void print_reasons(const json& r) {
  std::printf("\nwhere ours differs from the paper by more than 30%% (or cannot be compared):\n");
  int n = 0;
  for (const auto& row : r["rows"]) {
    for (const auto& c : r["columns"]) {
      const std::string& why =
          row["columns"][c["id"].get<std::string>()]["gap_reason"].get_ref<const std::string&>();
      if (why.empty()) continue;
      std::printf("  %s %s vs %s: %s\n", row["model"].get<std::string>().c_str(),
                  row["cluster"].get<std::string>().c_str(), c["label"].get<std::string>().c_str(),
                  why.c_str());
      ++n;
    }
  }
  for (const auto& c : r["columns"]) {
    for (const auto& g : r["geomeans"]) {
      const std::string& why = g["gap_reason"].get_ref<const std::string&>();
      if (g["column"] != c["id"] || why.empty()) continue;
      std::printf("  %s geomean vs %s: %s\n", g["model"].get<std::string>().c_str(),
                  c["label"].get<std::string>().c_str(), why.c_str());
      ++n;
    }
  }
  if (n == 0) std::printf("  none\n");
}

void print_no_plans(const json& r) {
  bool any = false;
  auto line = [&](const json& row, const std::string& who, const std::string& why) {
    if (!any) std::printf("\nno plan:\n");
    any = true;
    std::printf("  %s %s, %s: %s\n", row["model"].get<std::string>().c_str(),
                row["cluster"].get<std::string>().c_str(), who.c_str(), why.c_str());
  };
  for (const auto& row : r["rows"]) {
    if (row["ours"].is_null()) {
      line(row, "ours", row["ours_no_plan"].get<std::string>());
      continue;
    }
    for (const auto& c : r["columns"]) {
      const json& cell = row["columns"][c["id"].get<std::string>()];
      if (!cell["result"].is_null()) continue;
      const std::string note = cell["note"].get<std::string>();
      line(row, c["label"].get<std::string>(),
           cell["no_plan"].get<std::string>() + (note.empty() ? "" : " (" + note + ")"));
    }
  }
}

}  // namespace

void print_reproduce_table(const json& r) {
  std::printf("The HAPMoE paper's evaluation on this planner's cost model (%s)\n",
              r["paper"]["source"].get<std::string>().c_str());
  print_setups(r);
  std::printf(
      "\nratios: our best plan's tokens/s over the column's (x); the paper's figure in "
      "[brackets]\n");
  print_header(r["columns"]);
  print_rows(r);
  print_geomeans(r);
  print_no_plans(r);
  print_reasons(r);
  std::printf("\ncolumns:\n");
  for (const auto& c : r["columns"]) {
    std::printf("  %s: %s\n", c["label"].get<std::string>().c_str(),
                c["rule"].get<std::string>().c_str());
  }
}

}  // namespace hapmoe::cli
