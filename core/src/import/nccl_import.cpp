// nccl-tests output -> collective points (profile_import.hpp). Format: NVIDIA/nccl-tests
// src/common.cu (header, "#  Rank" lines, the size/count/type/redop/root/time/algbw/busbw table).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>
#include <tuple>

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

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<CollectiveOp> op_of_test(const std::string& name) {
  for (CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter,
                          CollectiveOp::kAllToAll}) {
    if (name.find(collective_perf_name(op)) != std::string::npos) return op;
  }
  return std::nullopt;
}

std::string line_field(size_t line_no) { return "line " + std::to_string(line_no); }

std::string number_text(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

// One run being read.
struct Scan {
  NcclRun run;
  std::optional<CollectiveOp> named_op;  // from its "Collective test starting: X_perf" line
  size_t named_line = 0;
  int busbw_column = -1;                 // index of the out-of-place busbw in a table row
  std::map<long long, size_t> rank_lines;  // rank index -> its line
  std::map<double, size_t> size_lines;     // size -> its row's line
  bool started() const { return !rank_lines.empty() || !size_lines.empty(); }
};

// "#  Rank  0 Group  0 Pid 123 on HOST device  0 [0x18] NVIDIA H100 80GB HBM3"
Expected<bool> read_rank_line(const std::vector<std::string>& t, const std::string& line, size_t line_no, Scan* s) {
  auto on = std::find(t.begin(), t.end(), "on");
  if (on == t.end() || on + 1 == t.end() || t.size() < 3 || !all_digits(t[2]) || t[2].size() > 9) return true;
  const long long rank = std::atoll(t[2].c_str());
  const auto [it, fresh] = s->rank_lines.emplace(rank, line_no);
  if (!fresh) {
    return Error{"bad_value", "rank " + t[2] + " is listed again in the same run (first at line " +
                                  std::to_string(it->second) + "): two outputs joined without their headers?",
                 line_field(line_no)};
  }
  ++s->run.ranks;
  const std::string& host = *(on + 1);
  if (std::find(s->run.hosts.begin(), s->run.hosts.end(), host) == s->run.hosts.end()) s->run.hosts.push_back(host);
  const size_t bracket = line.find(']');
  const size_t name = bracket == std::string::npos ? bracket : line.find_first_not_of(' ', bracket + 1);
  if (s->run.device.empty() && name != std::string::npos) s->run.device = line.substr(name);
  return true;
}

Expected<bool> read_comment(const std::vector<std::string>& t, const std::string& line, size_t line_no, Scan* s) {
  if (t.size() >= 2 && t[1] == "Rank") return read_rank_line(t, line, line_no, s);
  if (line.find("Collective test starting:") != std::string::npos && !s->named_op) {
    s->named_op = op_of_test(line);
    s->named_line = line_no;
  }
  if (s->busbw_column < 0 && std::find(t.begin(), t.end(), "size") != t.end()) {
    auto b = std::find(t.begin(), t.end(), "busbw");
    if (b != t.end()) s->busbw_column = static_cast<int>(b - t.begin()) - 1;  // minus the leading "#"
  }
  return true;
}

// A table row: its size and out-of-place busbw, within the profile's bounds.
Expected<bool> read_row(const std::vector<std::string>& t, size_t line_no, Scan* s) {
  if (s->busbw_column < 0) return Error{"bad_value", "no size/.../busbw column header before this table row", line_field(line_no)};
  if (static_cast<int>(t.size()) <= s->busbw_column) return Error{"bad_value", "table row has fewer columns than its header", line_field(line_no)};
  const auto bytes = number_of(t[0]);
  const auto busbw = number_of(t[s->busbw_column]);
  if (!bytes || !busbw || *bytes < 0 || *busbw < 0) {
    return Error{"bad_value", "expected numbers in the size and busbw columns", line_field(line_no)};
  }
  if (*bytes == 0 || *busbw == 0) return true;  // empty messages (and busbw printed as 0.00) carry no bandwidth
  if (*bytes > kMaxProfileBytes) {
    return Error{"out_of_range", "size " + t[0] + " B is above the profile's limit of 2^50 bytes", line_field(line_no)};
  }
  if (*busbw < kMinProfileBusbwGbps || *busbw > kMaxProfileBusbwGbps) {
    return Error{"out_of_range", "busbw " + t[s->busbw_column] + " GB/s is outside the profile's range (" +
                                     number_text(kMinProfileBusbwGbps) + " to " + number_text(kMaxProfileBusbwGbps) + ")",
                 line_field(line_no)};
  }
  const auto [it, fresh] = s->size_lines.emplace(*bytes, line_no);
  if (!fresh) {
    return Error{"bad_value", "size " + t[0] + " appears again in the same run (first at line " +
                                  std::to_string(it->second) + "): two tables joined without their headers?",
                 line_field(line_no)};
  }
  if (s->run.points.size() >= kMaxProfileCollectivePoints) {
    return Error{"too_many", "more than " + std::to_string(kMaxProfileCollectivePoints) + " table rows", line_field(line_no)};
  }
  s->run.points.push_back({CollectiveOp::kAllReduce, 0, Placement::kIntraNode, *bytes, *busbw});
  s->run.point_lines.push_back(line_no);
  return true;
}

// The run's op, ranks and placement on each of its points; errors when they cannot be told.
Expected<NcclRun> finish_run(Scan s, const NcclImportOptions& options) {
  NcclRun& run = s.run;
  const std::string at = line_field(run.first_line);
  if (options.op && s.named_op && *options.op != *s.named_op) {
    return Error{"bad_value", std::string("the output runs ") + collective_perf_name(*s.named_op) + " (line " +
                                  std::to_string(s.named_line) + "), the requested op is " + to_string(*options.op),
                 "op"};
  }
  const std::optional<CollectiveOp> op = options.op ? options.op : s.named_op;
  if (!op) return Error{"bad_value", "cannot tell the collective: no \"Collective test starting: <name>_perf\" line; give the op", "op"};
  if (run.points.empty()) return Error{"bad_value", "no size/busbw table rows found in the run from " + at, "$"};
  if (run.ranks < 2) {
    return Error{"bad_value", "expected \"#  Rank\" lines for at least 2 ranks (the test's -g x -t x processes) in the run from " + at, "$"};
  }
  run.placement = options.placement ? *options.placement
                                    : run.hosts.size() > 1 ? Placement::kInterNode : Placement::kIntraNode;
  run.op = *op;
  for (CollectivePoint& p : run.points) {
    p.op = run.op;
    p.ranks = run.ranks;
    p.placement = run.placement;
  }
  return std::move(run);
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

Expected<std::vector<NcclRun>> import_nccl_tests(const std::string& text, const NcclImportOptions& options) {
  if (text.size() > kMaxImportTextBytes) return Error{"too_large", "nccl-tests output above 8 MiB", "$"};
  std::vector<NcclRun> runs;
  Scan s;
  s.run.first_line = 1;
  std::istringstream in(text);
  size_t line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    const std::vector<std::string> t = tokens_of(line);
    if (t.empty()) continue;
    // A run's header after another run's ranks or rows starts the next run.
    const bool header = line.find("Collective test starting:") != std::string::npos ||
                        (t[0] == "#" && t.size() > 1 && t[1] == "nThread");
    if (header && s.started()) {
      auto run = finish_run(std::move(s), options);
      if (!run) return run.error();
      runs.push_back(std::move(run).value());
      s = Scan{};
      s.run.first_line = line_no;
    }
    Expected<bool> r = true;
    if (t[0][0] == '#') {
      r = read_comment(t, line, line_no, &s);
    } else if (all_digits(t[0])) {
      r = read_row(t, line_no, &s);
    }
    if (!r) return r.error();
  }
  auto run = finish_run(std::move(s), options);
  if (!run) return run.error();
  runs.push_back(std::move(run).value());
  return runs;
}

Expected<std::vector<CollectivePoint>> merge_nccl_runs(const std::vector<NamedNcclRun>& runs,
                                                       std::vector<size_t>* repeated) {
  using Key = std::tuple<CollectiveOp, long long, Placement, double>;
  struct Seen {
    double busbw_gbps;
    size_t run, line;
  };
  std::map<Key, Seen> seen;
  std::vector<CollectivePoint> out;
  repeated->assign(runs.size(), 0);
  for (size_t r = 0; r < runs.size(); ++r) {
    const NcclRun& run = *runs[r].run;
    for (size_t i = 0; i < run.points.size(); ++i) {
      const CollectivePoint& p = run.points[i];
      const auto [it, fresh] = seen.emplace(Key{p.op, p.ranks, p.placement, p.bytes}, Seen{p.busbw_gbps, r, run.point_lines[i]});
      if (fresh) {
        out.push_back(p);
        continue;
      }
      if (it->second.busbw_gbps == p.busbw_gbps) {  // the same measurement again
        ++(*repeated)[r];
        continue;
      }
      const NamedNcclRun& first = runs[it->second.run];
      return Error{"conflicting_points",
                   runs[r].file + " line " + std::to_string(run.point_lines[i]) + ": " + to_string(p.op) + " over " +
                       std::to_string(p.ranks) + " ranks (" + to_string(p.placement) + ") at " + number_text(p.bytes) +
                       " B measures busbw " + number_text(p.busbw_gbps) + " GB/s; " + first.file + " line " +
                       std::to_string(it->second.line) + " measured " + number_text(it->second.busbw_gbps) +
                       ": a profile holds one measurement per point (import one run per op, ranks and placement)",
                   runs[r].field};
    }
  }
  return out;
}

}  // namespace hapmoe
