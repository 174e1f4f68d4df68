#include "cost/profile_lookup.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace hapmoe {

namespace {

using Mesh4 = std::array<int, 4>;  // tp, cp, ep, etp

Mesh4 mesh_of(const LayerPoint& p) { return {p.tp, p.cp, p.ep, p.etp}; }
Mesh4 mesh_of(const LayerQuery& q) { return {q.tp, q.cp, q.ep, q.etp}; }

LayerQuery with_mesh(LayerQuery q, const Mesh4& m) {
  q.tp = m[0], q.cp = m[1], q.ep = m[2], q.etp = m[3];
  return q;
}

// (tokens, fwd_s, bwd_s) of one mesh's points, sorted by tokens; equal tokens averaged, except
// that a point of the query's seq_length stands alone for its tokens: one of another sequence
// length is another shape, and averaging it in replaced an exact measurement (one such point
// made every plan 10^5 x slower).
struct TokenPoint {
  double tokens, fwd_s, bwd_s;
  int micro_batch_size, seq_length;
};
std::vector<TokenPoint> token_points(const std::vector<const LayerPoint*>& pts, int query_seq) {
  std::vector<TokenPoint> v;
  for (const LayerPoint* p : pts) {
    v.push_back({p->tokens(), p->forward_ms / 1e3, p->backward_ms / 1e3, p->micro_batch_size, p->seq_length});
  }
  std::stable_sort(v.begin(), v.end(), [&](const TokenPoint& a, const TokenPoint& b) {
    return a.tokens < b.tokens || (a.tokens == b.tokens && a.seq_length == query_seq && b.seq_length != query_seq);
  });
  std::vector<TokenPoint> out;
  std::vector<int> count;
  for (const TokenPoint& t : v) {
    if (!out.empty() && out.back().tokens == t.tokens && out.back().seq_length == query_seq && t.seq_length != query_seq) {
      continue;
    }
    if (!out.empty() && out.back().tokens == t.tokens) {
      const int n = ++count.back();
      out.back().fwd_s += (t.fwd_s - out.back().fwd_s) / n;
      out.back().bwd_s += (t.bwd_s - out.back().bwd_s) / n;
    } else {
      out.push_back(t);
      count.push_back(1);
    }
  }
  return out;
}

// measured(point) x analytical(query) / analytical(point), term by term.
LayerTimes scaled(double fwd_s, double bwd_s, const LayerQuery& at, const LayerQuery& q,
                  const AnalyticalLayerFn& analytical) {
  const LayerTimes a_at = analytical(at), a_q = analytical(q);
  LayerTimes t;
  t.fwd_s = a_at.fwd_s > 0 ? fwd_s * a_q.fwd_s / a_at.fwd_s : fwd_s;
  t.bwd_s = a_at.bwd_s > 0 ? bwd_s * a_q.bwd_s / a_at.bwd_s : bwd_s;
  t.extrapolated = true;
  return t;
}

// Times at the query's tokens from the points of one mesh (the query carries that mesh).
LayerTimes at_tokens(const std::vector<const LayerPoint*>& pts, const LayerQuery& q,
                     const AnalyticalLayerFn& analytical) {
  const std::vector<TokenPoint> v = token_points(pts, q.seq_length);
  const double x = q.tokens();
  if (x < v.front().tokens || x > v.back().tokens) {
    const TokenPoint& p = x < v.front().tokens ? v.front() : v.back();
    LayerQuery at = q;
    at.micro_batch_size = p.micro_batch_size;
    at.seq_length = p.seq_length;
    return scaled(p.fwd_s, p.bwd_s, at, q, analytical);
  }
  size_t i = 0;
  while (i + 1 < v.size() && v[i + 1].tokens < x) ++i;
  if (v[i].tokens == x || i + 1 == v.size()) return {v[i].fwd_s, v[i].bwd_s, false};
  const TokenPoint &a = v[i], &b = v[i + 1];
  const double w = (x - a.tokens) / (b.tokens - a.tokens);
  return {a.fwd_s + w * (b.fwd_s - a.fwd_s), a.bwd_s + w * (b.bwd_s - a.bwd_s), false};
}

// The points of one mesh, grouped in first-seen order.
struct MeshPoints {
  Mesh4 mesh;
  std::vector<const LayerPoint*> points;
};
std::vector<MeshPoints> group_by_mesh(const GpuProfile& profile, LayerKind kind) {
  std::vector<MeshPoints> groups;
  for (const LayerPoint& p : profile.layers) {
    if (p.kind != kind) continue;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const MeshPoints& g) { return g.mesh == mesh_of(p); });
    if (it == groups.end()) {
      groups.push_back({mesh_of(p), {}});
      it = groups.end() - 1;
    }
    it->points.push_back(&p);
  }
  return groups;
}

double log_lerp(double x, double x0, double y0, double x1, double y1) {
  if (y0 <= 0 || y1 <= 0) return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
  const double w = std::log(x / x0) / std::log(x1 / x0);
  return std::exp(std::log(y0) + w * (std::log(y1) - std::log(y0)));
}

// Log-log interpolation along one parallel size d between meshes equal to the query elsewhere.
std::optional<LayerTimes> along_one_size(const std::vector<MeshPoints>& groups, const LayerQuery& q,
                                         const AnalyticalLayerFn& analytical) {
  const Mesh4 qm = mesh_of(q);
  for (int d = 0; d < 4; ++d) {
    const MeshPoints *lo = nullptr, *hi = nullptr;
    for (const MeshPoints& g : groups) {
      bool others_equal = true;
      for (int k = 0; k < 4; ++k) others_equal = others_equal && (k == d || g.mesh[k] == qm[k]);
      if (!others_equal) continue;
      if (g.mesh[d] < qm[d] && (!lo || g.mesh[d] > lo->mesh[d])) lo = &g;
      if (g.mesh[d] > qm[d] && (!hi || g.mesh[d] < hi->mesh[d])) hi = &g;
    }
    if (!lo || !hi) continue;
    const LayerTimes a = at_tokens(lo->points, with_mesh(q, lo->mesh), analytical);
    const LayerTimes b = at_tokens(hi->points, with_mesh(q, hi->mesh), analytical);
    const double x = qm[d], x0 = lo->mesh[d], x1 = hi->mesh[d];
    return LayerTimes{log_lerp(x, x0, a.fwd_s, x1, b.fwd_s), log_lerp(x, x0, a.bwd_s, x1, b.bwd_s),
                      a.extrapolated || b.extrapolated};
  }
  return std::nullopt;
}

double mesh_distance(const Mesh4& a, const Mesh4& b) {
  double d = 0;
  for (int k = 0; k < 4; ++k) d += std::fabs(std::log2(static_cast<double>(a[k]) / b[k]));
  return d;
}

}  // namespace

std::optional<LayerTimes> measured_layer_times(const GpuProfile& profile, const LayerQuery& q,
                                               const AnalyticalLayerFn& analytical) {
  const std::vector<MeshPoints> groups = group_by_mesh(profile, q.kind);
  if (groups.empty()) return std::nullopt;
  for (const MeshPoints& g : groups) {
    if (g.mesh == mesh_of(q)) return at_tokens(g.points, q, analytical);
  }
  if (auto t = along_one_size(groups, q, analytical)) return t;
  const MeshPoints* best = &groups.front();
  for (const MeshPoints& g : groups) {
    if (mesh_distance(g.mesh, mesh_of(q)) < mesh_distance(best->mesh, mesh_of(q))) best = &g;
  }
  const LayerQuery at = with_mesh(q, best->mesh);
  const LayerTimes t = at_tokens(best->points, at, analytical);
  return scaled(t.fwd_s, t.bwd_s, at, q, analytical);
}

std::optional<Busbw> measured_busbw(const GpuProfile& profile, CollectiveOp op, Placement placement,
                                    long long ranks, double bytes) {
  auto rank_distance = [ranks](long long r) {
    return std::fabs(std::log2(static_cast<double>(r) / static_cast<double>(std::max(1LL, ranks))));
  };
  const CollectivePoint* nearest = nullptr;
  for (const CollectivePoint& c : profile.collectives) {
    if (c.op != op || c.placement != placement) continue;
    if (!nearest || rank_distance(c.ranks) < rank_distance(nearest->ranks) ||
        (rank_distance(c.ranks) == rank_distance(nearest->ranks) && c.ranks > nearest->ranks)) {
      nearest = &c;
    }
  }
  if (!nearest) return std::nullopt;
  std::vector<const CollectivePoint*> v;
  for (const CollectivePoint& c : profile.collectives) {
    if (c.op == op && c.placement == placement && c.ranks == nearest->ranks) v.push_back(&c);
  }
  std::stable_sort(v.begin(), v.end(), [](const CollectivePoint* a, const CollectivePoint* b) { return a->bytes < b->bytes; });
  Busbw out;
  out.extrapolated = nearest->ranks != ranks;
  if (bytes <= v.front()->bytes || bytes >= v.back()->bytes) {
    const CollectivePoint* end = bytes <= v.front()->bytes ? v.front() : v.back();
    out.gbps = end->busbw_gbps;
    out.extrapolated = out.extrapolated || bytes != end->bytes;
    return out;
  }
  size_t i = 0;
  while (v[i + 1]->bytes < bytes) ++i;
  out.gbps = log_lerp(bytes, v[i]->bytes, v[i]->busbw_gbps, v[i + 1]->bytes, v[i + 1]->busbw_gbps);
  return out;
}

std::optional<Link> measured_link_of(const GpuProfile& profile, CollectiveOp op, Placement placement,
                                     long long ranks, double bytes, unsigned term, unsigned* measured,
                                     unsigned* extrapolated) {
  const std::optional<Busbw> bw = measured_busbw(profile, op, placement, ranks, bytes);
  if (!bw) return std::nullopt;
  *measured |= term;
  if (bw->extrapolated) *extrapolated |= term;
  return Link{bw->gbps, 1, 0};
}

}  // namespace hapmoe
