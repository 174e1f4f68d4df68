// profile_lookup.hpp: measured layer times (linear in tokens, log-log in one parallel size,
// analytical shape outside the points) and collective bus bandwidth (log-log in bytes, clamped
// outside), each against hand-computed values.
#include "cost/profile_lookup.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

namespace {

using hapmoe::Busbw;
using hapmoe::CollectiveOp;
using hapmoe::GpuProfile;
using hapmoe::LayerKind;
using hapmoe::LayerPoint;
using hapmoe::LayerQuery;
using hapmoe::LayerTimes;
using hapmoe::Placement;

LayerPoint moe_point(int tp, int ep, int mbs, int seq, double fwd_ms, double bwd_ms) {
  LayerPoint p;
  p.kind = LayerKind::kMoe;
  p.tp = tp;
  p.ep = ep;
  p.micro_batch_size = mbs;
  p.seq_length = seq;
  p.forward_ms = fwd_ms;
  p.backward_ms = bwd_ms;
  return p;
}

LayerQuery moe_query(int tp, int ep, int mbs, int seq) {
  LayerQuery q;
  q.kind = LayerKind::kMoe;
  q.tp = tp;
  q.ep = ep;
  q.micro_batch_size = mbs;
  q.seq_length = seq;
  return q;
}

// Analytical stand-in: forward 1 us per token / TP, backward twice that.
LayerTimes toy_analytical(const LayerQuery& q) {
  const double f = q.tokens() * 1e-6 / q.tp;
  return {f, 2 * f, false};
}

}  // namespace

TEST_CASE("layer time: linear in tokens between points of the query's mesh") {
  GpuProfile g;
  g.layers = {moe_point(1, 8, 1, 4096, 10, 20), moe_point(1, 8, 1, 8192, 30, 60)};
  const auto t = hapmoe::measured_layer_times(g, moe_query(1, 8, 1, 6144), toy_analytical);
  REQUIRE(t);
  CHECK(t->fwd_s == doctest::Approx(0.020));  // halfway: (10 + 30) / 2 ms
  CHECK(t->bwd_s == doctest::Approx(0.040));
  CHECK_FALSE(t->extrapolated);
  // mbs 2 x 4096 = 8192 tokens: the second point exactly.
  const auto u = hapmoe::measured_layer_times(g, moe_query(1, 8, 2, 4096), toy_analytical);
  CHECK(u->fwd_s == doctest::Approx(0.030));
  CHECK_FALSE(u->extrapolated);
}

TEST_CASE("layer time: a point of the query's sequence length is not averaged with another shape of equal tokens") {
  GpuProfile g;
  // 4096 tokens twice: mbs 1 x 4096 (the query's shape) and mbs 2 x 2048, far apart. Averaged,
  // the exact point gave 5,000 ms, and every plan of the mesh 10^5 x its time.
  g.layers = {moe_point(1, 8, 1, 4096, 10, 20), moe_point(1, 8, 2, 2048, 1e4, 2e4)};
  const auto t = hapmoe::measured_layer_times(g, moe_query(1, 8, 1, 4096), toy_analytical);
  CHECK(t->fwd_s == doctest::Approx(0.010));
  CHECK(t->bwd_s == doctest::Approx(0.020));
  CHECK_FALSE(t->extrapolated);
  // A query of the other shape takes its own point.
  CHECK(hapmoe::measured_layer_times(g, moe_query(1, 8, 2, 2048), toy_analytical)->fwd_s == doctest::Approx(10));
  // Neither shape measured (seq 1024, mbs 4): points of other lengths at equal tokens average, as before.
  CHECK(hapmoe::measured_layer_times(g, moe_query(1, 8, 4, 1024), toy_analytical)->fwd_s ==
        doctest::Approx((0.010 + 10) / 2));
}

TEST_CASE("layer time: beyond the points, the nearest one scaled by the analytical shape") {
  GpuProfile g;
  g.layers = {moe_point(1, 8, 1, 4096, 10, 20), moe_point(1, 8, 1, 8192, 30, 60)};
  // 16384 tokens: 30 ms x (16384 / 8192) from the toy model's linear shape.
  const auto t = hapmoe::measured_layer_times(g, moe_query(1, 8, 1, 16384), toy_analytical);
  CHECK(t->fwd_s == doctest::Approx(0.060));
  CHECK(t->bwd_s == doctest::Approx(0.120));
  CHECK(t->extrapolated);
  // 2048 tokens: 10 ms x 2048 / 4096.
  const auto u = hapmoe::measured_layer_times(g, moe_query(1, 8, 1, 2048), toy_analytical);
  CHECK(u->fwd_s == doctest::Approx(0.005));
  CHECK(u->extrapolated);
}

TEST_CASE("layer time: log-log between the sizes around the query") {
  GpuProfile g;
  g.layers = {moe_point(1, 8, 1, 4096, 10, 20), moe_point(4, 8, 1, 4096, 2.5, 5)};
  // TP 2 halfway in log2 between 1 and 4: sqrt(10 x 2.5) = 5 ms.
  const auto t = hapmoe::measured_layer_times(g, moe_query(2, 8, 1, 4096), toy_analytical);
  CHECK(t->fwd_s == doctest::Approx(0.005));
  CHECK(t->bwd_s == doctest::Approx(0.010));
  CHECK_FALSE(t->extrapolated);
}

TEST_CASE("layer time: no bracketing sizes -> nearest mesh scaled, flagged") {
  GpuProfile g;
  g.layers = {moe_point(2, 8, 1, 4096, 8, 16)};
  // TP 4: 8 ms x (1/4) / (1/2) by the toy model's 1/TP shape.
  const auto t = hapmoe::measured_layer_times(g, moe_query(4, 8, 1, 4096), toy_analytical);
  CHECK(t->fwd_s == doctest::Approx(0.004));
  CHECK(t->extrapolated);
  // A dense layer has no points: the analytical model stays.
  LayerQuery dense = moe_query(2, 8, 1, 4096);
  dense.kind = LayerKind::kDense;
  CHECK_FALSE(hapmoe::measured_layer_times(g, dense, toy_analytical));
}

TEST_CASE("bus bandwidth: log-log in bytes, clamped outside, nearest rank count") {
  GpuProfile g;
  g.collectives = {{CollectiveOp::kAllGather, 8, Placement::kIntraNode, 1 << 20, 10},
                   {CollectiveOp::kAllGather, 8, Placement::kIntraNode, 1 << 22, 40},
                   {CollectiveOp::kAllToAll, 16, Placement::kInterNode, 1 << 20, 30}};
  // 2 MiB halfway in log between 1 and 4 MiB: sqrt(10 x 40) = 20 GB/s.
  auto b = hapmoe::measured_busbw(g, CollectiveOp::kAllGather, Placement::kIntraNode, 8, 1 << 21);
  REQUIRE(b);
  CHECK(b->gbps == doctest::Approx(20));
  CHECK_FALSE(b->extrapolated);
  b = hapmoe::measured_busbw(g, CollectiveOp::kAllGather, Placement::kIntraNode, 8, 1 << 19);
  CHECK(b->gbps == 10);
  CHECK(b->extrapolated);
  b = hapmoe::measured_busbw(g, CollectiveOp::kAllGather, Placement::kIntraNode, 8, 1 << 24);
  CHECK(b->gbps == 40);
  CHECK(b->extrapolated);
  // 4 ranks: the 8-rank points, flagged.
  b = hapmoe::measured_busbw(g, CollectiveOp::kAllGather, Placement::kIntraNode, 4, 1 << 21);
  CHECK(b->gbps == doctest::Approx(20));
  CHECK(b->extrapolated);
  // Other op or placement: no point.
  CHECK_FALSE(hapmoe::measured_busbw(g, CollectiveOp::kReduceScatter, Placement::kIntraNode, 8, 1 << 21));
  CHECK_FALSE(hapmoe::measured_busbw(g, CollectiveOp::kAllToAll, Placement::kIntraNode, 16, 1 << 20));
}

TEST_CASE("measured link: busbw as the link rate, flags set, null profile -> none") {
  GpuProfile g;
  g.collectives = {{CollectiveOp::kAllReduce, 4, Placement::kIntraNode, 1 << 20, 100}};
  unsigned measured = 0, extrapolated = 0;
  const auto l = hapmoe::measured_link(&g, CollectiveOp::kAllReduce, Placement::kIntraNode, 4, 1 << 20,
                                       hapmoe::kTermTpComm, &measured, &extrapolated);
  REQUIRE(l);
  CHECK(l->bytes_per_s() == doctest::Approx(100e9));
  CHECK(l->latency_s == 0);
  CHECK(measured == hapmoe::kTermTpComm);
  CHECK(extrapolated == 0);
  CHECK_FALSE(hapmoe::measured_link(nullptr, CollectiveOp::kAllReduce, Placement::kIntraNode, 4, 1 << 20,
                                    hapmoe::kTermTpComm, &measured, &extrapolated));
  const std::vector<const char*> names = hapmoe::measured_term_names(hapmoe::kTermForward | hapmoe::kTermEpComm);
  CHECK(std::vector<std::string>(names.begin(), names.end()) == std::vector<std::string>{"forward_s", "ep_comm_s"});
}
