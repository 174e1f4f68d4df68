// nccl-tests output -> collective points (profile_import.hpp). Format: NVIDIA/nccl-tests
// src/common.cu (header, "#  Rank" lines, the size/count/type/redop/root/time/algbw/busbw table).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "hapmoe/profile_import.hpp"
#include "io/profile_io.hpp"

namespace hapmoe {

namespace {

std::vector<std::string> tokens_of(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> t;
  for (std::string w; in >> w;) t.push_back(w);
  return t;
}

// A finite number spelled fully by `s` (no trailing text), or nullopt.
std::optional<double> number_of(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<CollectiveOp> op_of_test(const std::string& name) {
  for (CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter,
                          CollectiveOp::kAllToAll}) {
    if (name.find(collective_perf_name(op)) != std::string::npos) return op;
  }
  return std::nullopt;
}

std::string line_field(size_t line_no) { return "line " + std::to_string(line_no); }

struct Scan {
  NcclImport out;
  std::optional<CollectiveOp> op;
  int busbw_column = -1;  // index of the out-of-place busbw in a table row
};

// "#  Rank  0 Group  0 Pid 123 on HOST device  0 [0x18] NVIDIA H100 80GB HBM3"
void read_rank_line(const std::vector<std::string>& t, const std::string& line, Scan* s) {
  auto on = std::find(t.begin(), t.end(), "on");
  if (on == t.end() || on + 1 == t.end()) return;
  ++s->out.ranks;
  const std::string& host = *(on + 1);
  if (std::find(s->out.hosts.begin(), s->out.hosts.end(), host) == s->out.hosts.end()) s->out.hosts.push_back(host);
  const size_t bracket = line.find(']');
  const size_t name = bracket == std::string::npos ? bracket : line.find_first_not_of(' ', bracket + 1);
  if (s->out.device.empty() && name != std::string::npos) s->out.device = line.substr(name);
}

void read_comment(const std::vector<std::string>& t, const std::string& line, Scan* s) {
  if (t.size() >= 2 && t[1] == "Rank") return read_rank_line(t, line, s);
  if (line.find("Collective test starting:") != std::string::npos && !s->op) s->op = op_of_test(line);
  if (s->busbw_column < 0 && std::find(t.begin(), t.end(), "size") != t.end()) {
    auto b = std::find(t.begin(), t.end(), "busbw");
    if (b != t.end()) s->busbw_column = static_cast<int>(b - t.begin()) - 1;  // minus the leading "#"
  }
}

Expected<bool> read_row(const std::vector<std::string>& t, size_t line_no, Scan* s) {
  if (s->busbw_column < 0) return Error{"bad_value", "no size/.../busbw column header before this table row", line_field(line_no)};
  if (static_cast<int>(t.size()) <= s->busbw_column) return Error{"bad_value", "table row has fewer columns than its header", line_field(line_no)};
  const auto bytes = number_of(t[0]);
  const auto busbw = number_of(t[s->busbw_column]);
  if (!bytes || !busbw || *bytes < 0 || *busbw < 0) {
    return Error{"bad_value", "expected numbers in the size and busbw columns", line_field(line_no)};
  }
  if (*bytes == 0 || *busbw == 0) return true;  // empty messages carry no bandwidth
  if (s->out.points.size() >= kMaxProfileCollectivePoints) {
    return Error{"too_many", "more than " + std::to_string(kMaxProfileCollectivePoints) + " table rows", line_field(line_no)};
  }
  s->out.points.push_back({CollectiveOp::kAllReduce, 0, Placement::kIntraNode, *bytes, *busbw});
  return true;
}

}  // namespace

const char* collective_perf_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllGather: return "all_gather_perf";
    case CollectiveOp::kReduceScatter: return "reduce_scatter_perf";
    case CollectiveOp::kAllToAll: return "alltoall_perf";
    default: return "all_reduce_perf";
  }
}

Expected<NcclImport> import_nccl_tests(const std::string& text, const NcclImportOptions& options) {
  if (text.size() > kMaxImportTextBytes) return Error{"too_large", "nccl-tests output above 8 MiB", "$"};
  Scan s;
  std::istringstream in(text);
  size_t line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    const std::vector<std::string> t = tokens_of(line);
    if (t.empty()) continue;
    if (t[0][0] == '#') {
      read_comment(t, line, &s);
    } else if (std::all_of(t[0].begin(), t[0].end(), [](char c) { return c >= '0' && c <= '9'; })) {
      const Expected<bool> r = read_row(t, line_no, &s);
      if (!r) return r.error();
    }
  }
  NcclImport& out = s.out;
  if (options.op) s.op = options.op;
  if (!s.op) return Error{"bad_value", "cannot tell the collective: no \"Collective test starting: <name>_perf\" line; give the op", "op"};
  if (out.points.empty()) return Error{"bad_value", "no size/busbw table rows found", "$"};
  if (out.ranks < 2) return Error{"bad_value", "expected \"#  Rank\" lines for at least 2 ranks (the test's -g x -t x processes)", "$"};
  if (options.placement) {
    out.placement = *options.placement;
  } else {
    out.placement = out.hosts.size() > 1 ? Placement::kInterNode : Placement::kIntraNode;
  }
  out.op = *s.op;
  for (CollectivePoint& p : out.points) {
    p.op = out.op;
    p.ranks = out.ranks;
    p.placement = out.placement;
  }
  return out;
}

}  // namespace hapmoe
