#include "io/budget_io.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace hapmoe {

using nlohmann::json;

json budget_to_json(const SearchStats& st) {
  const SearchWork& w = st.work;
  return {{"limits_reached", st.limits_reached},
          {"used", {{"combinations", w.combinations}, {"shapes", w.shapes}, {"group_sets", w.group_sets}, {"entries", w.entries},
                    {"orders", w.orders}, {"stage_costs", w.stage_costs}}},
          {"shapes_cut_short", st.shapes_cut_short},
          {"entries_dropped", st.entries_dropped},
          {"entries_unsearched", st.entries_unsearched}};
}

namespace {

// "1,234,567"
std::string grouped(long long n) {
  std::string d = std::to_string(n);
  for (int i = static_cast<int>(d.size()) - 3; i > (d[0] == '-' ? 1 : 0); i -= 3) d.insert(static_cast<size_t>(i), ",");
  return d;
}

const char* limit_words(const std::string& limit) {
  if (limit == "combinations") return "search-list combinations";
  if (limit == "shapes") return "mesh shapes";
  if (limit == "group_sets") return "GPU-group sets";
  if (limit == "entries") return "(mesh, group set) entries";
  if (limit == "orders") return "stage orders";
  if (limit == "stage_costs") return "stage costs";
  if (limit == "table_cells") return "label-table cells";
  return "wall-clock time";
}

// The search lists with more than a few values, longest first ("micro_batch_size (4096 values)").
std::string long_lists(const SearchSpec& sp) {
  std::vector<std::pair<size_t, const char*>> lists = {
      {sp.tp.size(), "tp"}, {sp.cp.size(), "cp"}, {sp.pp.size(), "pp"}, {sp.ep.size(), "ep"},
      {sp.etp.size(), "etp"}, {sp.vpp.size(), "vpp"}, {sp.micro_batch_size.size(), "micro_batch_size"},
      {sp.recompute.size(), "recompute"}, {sp.optimizer_offload_fraction.size(), "optimizer_offload_fraction"}};
  std::stable_sort(lists.begin(), lists.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out;
  for (const auto& [n, name] : lists) {
    if (n <= 4) break;
    out += (out.empty() ? "" : ", ") + std::string("search.") + name + " (" + grouped(static_cast<long long>(n)) + " values)";
  }
  return out;
}

// Groups whose GPU spec or shape differ from every earlier one (each doubles the group sets).
int distinct_groups(const ClusterSpec& c) {
  int n = 0;
  for (size_t g = 0; g < c.groups.size(); ++g) {
    bool seen = false;
    for (size_t h = 0; h < g && !seen; ++h) seen = c.groups[h] == c.groups[g];
    n += !seen;
  }
  return n;
}

}  // namespace

std::string budget_note(const Scenario& s, const SearchStats& st) {
  std::string limits;
  for (const std::string& l : st.limits_reached) limits += (limits.empty() ? "" : ", ") + std::string(limit_words(l));
  std::string note = "search budget reached (" + limits + "): these are the best plans found, not proven optimal";
  auto reached = [&](const char* l) {
    return std::find(st.limits_reached.begin(), st.limits_reached.end(), l) != st.limits_reached.end();
  };
  if (reached("combinations") || reached("shapes")) {
    note += "; the mesh shapes were enumerated only as far as the first " + grouped(st.work.combinations) +
            " combinations of the search lists (" + grouped(st.work.shapes) + " shapes kept)";
  }
  if (st.shapes_cut_short > 0) {
    note += "; " + grouped(st.shapes_cut_short) + " mesh shapes had their GPU-group sets tried only in part or not at all";
  }
  if (st.entries_dropped > 0) {
    note += "; " + grouped(st.entries_dropped) + " (mesh, group set) entries of the highest lower bounds were dropped to keep " +
            grouped(st.work.entries);
  }
  if (st.entries_unsearched > 0) {
    note += "; " + grouped(st.entries_unsearched) + " (mesh, group set) entries that could still hold a better plan were not searched";
  }
  if (reached("seconds")) {
    note += "; the wall-clock limit ended it, so another machine may stop elsewhere";
  }
  std::string narrow = long_lists(s.search);
  const int distinct = distinct_groups(s.cluster);
  if (distinct > 8) narrow += (narrow.empty() ? "" : "; ") + std::to_string(distinct) + " distinct GPU groups";
  if (!narrow.empty()) note += ". Largest factors of the search space: " + narrow;
  return note;
}

}  // namespace hapmoe
