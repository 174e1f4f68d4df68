// Cost terms one by one (cost_compute, cost_comm, cost_memory, schedule, hardware) against
// values computed by hand from round-number inputs. Each expectation is written out from the
// formula in the header's contract.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "api.hpp"

#include "fixtures.hpp"
#include "cost/cost_comm.hpp"
#include "cost/cost_compute.hpp"
#include "hapmoe/cost_memory.hpp"
#include "hapmoe/hardware.hpp"
#include "hapmoe/evaluate.hpp"
#include "hapmoe/planner.hpp"
#include "hapmoe/scenario_io.hpp"
#include "hapmoe/schedule.hpp"

using doctest::Approx;

namespace {

constexpr double kEps = 1e-12;

// 100 TFLOPS BF16, 200 FP8, half-efficiency everywhere: easy hand arithmetic.
hapmoe::GpuSpec round_gpu() {
  hapmoe::GpuSpec g;
  g.id = "round";
  g.memory_gib = 80;
  g.bf16_tflops = 100;
  g.fp8_tflops = 200;
  g.hbm_gbps = 1000;
  g.intra_node_gbps = 400;
  g.inter_node_gbps = 40;
  g.gemm_efficiency = 0.5;
  g.fp8_gemm_speedup = 1.5;
  g.attention_efficiency = 0.5;
  g.grouped_gemm_half_tokens = 100;
  g.host_launch_us = 10;
  g.hbm_efficiency = 0.5;
  g.intra_node_efficiency = 0.8;
  g.inter_node_efficiency = 0.9;
  g.alltoall_intra_node_efficiency = 0.5;
  g.alltoall_inter_node_efficiency = 0.25;
  return g;
}

hapmoe::GpuSpec no_fp8_gpu() {
  hapmoe::GpuSpec g = round_gpu();
  g.fp8_tflops.reset();
  return g;
}

hapmoe::ModelSpec small_moe() { return hapmoe::testing::tiny_moe_model(); }

hapmoe::ActivationInputs inputs_100_tp2() {
  hapmoe::ActivationInputs in;
  in.tokens = 100;
  in.tp = 2;
  in.sequence_parallel = false;
  in.etp = 1;
  in.load_imbalance = 1;
  in.recompute = hapmoe::Recompute::kNone;
  return in;
}

}  // namespace

// ---------------------------------------------------------------- hardware.hpp

TEST_CASE("peak_tflops and gemm_flops_per_s") {
  const hapmoe::GpuSpec g = round_gpu();
  CHECK(hapmoe::peak_tflops(g, hapmoe::Precision::kBf16) == 100);
  CHECK(hapmoe::peak_tflops(g, hapmoe::Precision::kFp8) == 200);
  CHECK(hapmoe::peak_tflops(no_fp8_gpu(), hapmoe::Precision::kFp8) == 100);  // no FP8: BF16 peak
  // 100e12 x 0.5 = 5e13; FP8: x 1.5 = 7.5e13 (achieved ratio, not the 2x peak ratio).
  CHECK(hapmoe::gemm_flops_per_s(g, hapmoe::Precision::kBf16) == Approx(5e13).epsilon(kEps));
  CHECK(hapmoe::gemm_flops_per_s(g, hapmoe::Precision::kFp8) == Approx(7.5e13).epsilon(kEps));
  CHECK(hapmoe::gemm_flops_per_s(no_fp8_gpu(), hapmoe::Precision::kFp8) == Approx(5e13).epsilon(kEps));
}

TEST_CASE("links: scale-up inside the node, scale-out across it") {
  hapmoe::NodeGroup g;
  g.gpu = round_gpu();
  g.nodes = 4;
  g.gpus_per_node = 8;
  g.inter_node_gbps = 25;  // the group's scale-out bandwidth overrides the GPU's 40

  const hapmoe::Link up = hapmoe::scale_up_link(g);
  CHECK(up.gbps == 400);
  CHECK(up.efficiency == 0.8);
  CHECK(up.latency_s == 10e-6);
  CHECK(up.bytes_per_s() == Approx(400e9 * 0.8).epsilon(kEps));
  const hapmoe::Link out = hapmoe::scale_out_link(g);
  CHECK(out.gbps == 25);
  CHECK(out.efficiency == 0.9);
  CHECK(out.latency_s == 25e-6);

  for (long long span : {1LL, 2LL, 8LL}) {
    CAPTURE(span);
    CHECK(hapmoe::group_link(g, span).gbps == 400);
  }
  for (long long span : {9LL, 16LL, 32LL}) {
    CAPTURE(span);
    CHECK(hapmoe::group_link(g, span).gbps == 25);
    CHECK(hapmoe::group_link(g, span).latency_s == 25e-6);
  }

  // Between groups: explicit inter_group_gbps, else the smaller scale-out bandwidth; the smaller
  // bus efficiency.
  hapmoe::ClusterSpec c;
  hapmoe::NodeGroup g2 = g;
  g2.inter_node_gbps = 50;
  g2.gpu.inter_node_efficiency = 0.7;
  c.groups = {g, g2};
  CHECK(hapmoe::inter_group_link(c, 0, 1).gbps == 25);
  CHECK(hapmoe::inter_group_link(c, 1, 0).efficiency == 0.7);
  CHECK(hapmoe::inter_group_link(c, 0, 1).latency_s == 25e-6);
  c.inter_group_gbps = 12.5;
  CHECK(hapmoe::inter_group_link(c, 0, 1).gbps == 12.5);
}

// ---------------------------------------------------------------- cost_compute.hpp

TEST_CASE("gemm_shape_factor") {
  CHECK(hapmoe::gemm_shape_factor(128) == 0.5);   // 128 / (128 + 128)
  CHECK(hapmoe::gemm_shape_factor(384) == 0.75);  // 384 / 512
  CHECK(hapmoe::gemm_shape_factor(32) == 0.2);    // 32 / 160
  CHECK(hapmoe::gemm_shape_factor(0) == 1);       // unknown dimension: no penalty
  CHECK(hapmoe::gemm_shape_factor(4096) == Approx(4096.0 / 4224).epsilon(kEps));
}

TEST_CASE("gemm_time_s, BF16 and FP8") {
  const hapmoe::GpuSpec g = round_gpu();
  // 1e12 FLOPs, min dim 384 (factor 0.75): 1e12 / (5e13 x 0.75) = 1 / 37.5 s.
  CHECK(hapmoe::gemm_time_s(1e12, 384, g, hapmoe::Precision::kBf16) == Approx(1 / 37.5).epsilon(kEps));
  // FP8: 1e12 / (7.5e13 x 0.75) = 1 / 56.25 s.
  CHECK(hapmoe::gemm_time_s(1e12, 384, g, hapmoe::Precision::kFp8) == Approx(1 / 56.25).epsilon(kEps));
  // FP8 requested on a GPU without FP8: BF16 rate.
  CHECK(hapmoe::gemm_time_s(1e12, 384, no_fp8_gpu(), hapmoe::Precision::kFp8) ==
        Approx(1 / 37.5).epsilon(kEps));
  CHECK(hapmoe::gemm_time_s(0, 384, g, hapmoe::Precision::kBf16) == 0);
}

TEST_CASE("grouped_gemm_efficiency and grouped_gemm_time_s") {
  const hapmoe::GpuSpec g = round_gpu();  // half rate at 100 tokens per expert
  CHECK(hapmoe::grouped_gemm_efficiency(100, g) == 0.5);
  CHECK(hapmoe::grouped_gemm_efficiency(300, g) == 0.75);
  CHECK(hapmoe::grouped_gemm_efficiency(900, g) == 0.9);
  CHECK(hapmoe::grouped_gemm_efficiency(0, g) == 1);
  // 1e12 / (5e13 x 0.75 (dim 384) x 0.5 (100 tokens)) = 1 / 18.75 s.
  CHECK(hapmoe::grouped_gemm_time_s(1e12, 100, 384, g, hapmoe::Precision::kBf16) ==
        Approx(1 / 18.75).epsilon(kEps));
  // FP8: 7.5e13 x 0.75 x 0.75 (300 tokens) = 4.21875e13.
  CHECK(hapmoe::grouped_gemm_time_s(1e12, 300, 384, g, hapmoe::Precision::kFp8) ==
        Approx(1e12 / 4.21875e13).epsilon(kEps));
}

TEST_CASE("causal_attention_pairs, full and windowed") {
  CHECK(hapmoe::causal_attention_pairs(4096, 0) == 8388608.0);  // 4096^2 / 2
  // Window 1024 of 4096: 4096 x 1024 - 1024^2 / 2 = 4,194,304 - 524,288.
  CHECK(hapmoe::causal_attention_pairs(4096, 1024) == 3670016.0);
  CHECK(hapmoe::causal_attention_pairs(4096, 4096) == 8388608.0);  // window >= s: full
  CHECK(hapmoe::causal_attention_pairs(4096, 8192) == 8388608.0);
  CHECK(hapmoe::causal_attention_pairs(10, 2) == 18.0);  // 20 - 2
}

TEST_CASE("attention_core_fwd_flops and attention_core_time_s") {
  // 2 GEMMs (QK^T, PV) x pairs x heads: 2 x (1024^2 / 2) x 8 x (128 + 128) = 2^31.
  CHECK(hapmoe::attention_core_fwd_flops(1024, 0, 8, 128, 128) == 2147483648.0);
  // MLA-like dims (qk 192, v 128), window 256 of 1024: pairs 1024 x 256 - 256^2 / 2 = 229,376;
  // 2 x 229,376 x 16 x 320 = 2,348,810,240.
  CHECK(hapmoe::attention_core_fwd_flops(1024, 256, 16, 192, 128) == 2348810240.0);
  // Time at attention_efficiency (BF16 even for FP8): 1e12 / (100e12 x 0.5) = 0.02 s.
  CHECK(hapmoe::attention_core_time_s(1e12, round_gpu()) == Approx(0.02).epsilon(kEps));
  CHECK(hapmoe::attention_core_time_s(0, round_gpu()) == 0);
}

TEST_CASE("fp8_cast_bytes and moe_token_traffic_bytes") {
  CHECK(hapmoe::fp8_cast_bytes(1000, hapmoe::Precision::kBf16) == 0);
  CHECK(hapmoe::fp8_cast_bytes(1000, hapmoe::Precision::kFp8) == 3000);  // read 2 + write 1
  // 10 copies of width 64, expert width 32 (SwiGLU), 5 router tokens x 8 experts:
  // permute + un-permute 2 x 2 x 10 x 64 = 2560 elements, activation 10 x 32 x 3 = 960, both
  // BF16: 7040 bytes; router 3 x 5 x 8 = 120 fp32 = 480 bytes. Total 7520.
  CHECK(hapmoe::moe_token_traffic_bytes(10, 64, 32, true, 5, 8) == 7520);
  // Without SwiGLU the activation reads fm and writes fm: 640 elements: (2560 + 640) x 2 + 480.
  CHECK(hapmoe::moe_token_traffic_bytes(10, 64, 32, false, 5, 8) == 6880);
}

TEST_CASE("elementwise, fixed overheads, optimizer step") {
  const hapmoe::GpuSpec g = round_gpu();
  // 1e9 bytes / (1000e9 x 0.5) = 2 ms.
  CHECK(hapmoe::elementwise_time_s(1e9, g) == Approx(2e-3).epsilon(kEps));
  CHECK(hapmoe::elementwise_time_s(0, g) == 0);
  // Owned 1e6 x 36 B + local 4e6 x 6 B = 60e6 B / 5e11 B/s = 0.12 ms, + 2 ms fixed.
  CHECK(hapmoe::optimizer_step_time_s(1e6, 4e6, g) == Approx(1.2e-4 + 2e-3).epsilon(kEps));
}

// ---------------------------------------------------------------- cost_comm.hpp

TEST_CASE("ring collectives, all-reduce, p2p") {
  const hapmoe::Link link{100, 0.5, 1e-5};  // 5e10 B/s
  CHECK(hapmoe::ring_collective_time_s(1e9, 1, link) == 0);
  CHECK(hapmoe::ring_collective_time_s(1e9, 0, link) == 0);
  // 7/8 x 1e9 / 5e10 = 17.5 ms, + 10 us.
  CHECK(hapmoe::ring_collective_time_s(1e9, 8, link) == Approx(0.0175 + 1e-5).epsilon(kEps));
  CHECK(hapmoe::ring_collective_time_s(1e9, 2, link) == Approx(0.01 + 1e-5).epsilon(kEps));
  CHECK(hapmoe::all_reduce_time_s(1e9, 8, link) == Approx(2 * (0.0175 + 1e-5)).epsilon(kEps));
  CHECK(hapmoe::all_reduce_time_s(1e9, 1, link) == 0);
  // 1e9 / 5e10 = 20 ms, + 10 us.
  CHECK(hapmoe::p2p_time_s(1e9, link) == Approx(0.02 + 1e-5).epsilon(kEps));
  CHECK(hapmoe::p2p_time_s(0, link) == 0);
}

TEST_CASE("alltoall_time_s is bounded by the slower link") {
  const hapmoe::Link up{200, 1, 0};   // 2e11 B/s
  const hapmoe::Link out{10, 1, 0};   // 1e10 B/s
  // intra 1e9 / 2e11 = 5 ms, inter 1e8 / 1e10 = 10 ms -> 10 ms.
  CHECK(hapmoe::alltoall_time_s({1e9, 1e8}, up, out) == Approx(0.01).epsilon(kEps));
  // intra 4e9 -> 20 ms beats inter 10 ms.
  CHECK(hapmoe::alltoall_time_s({4e9, 1e8}, up, out) == Approx(0.02).epsilon(kEps));
  CHECK(hapmoe::alltoall_time_s({0, 0}, up, out) == 0);
  // Latency counts only for links that carry bytes.
  const hapmoe::Link up_lat{200, 1, 1e-3}, out_lat{10, 1, 5e-2};
  CHECK(hapmoe::alltoall_time_s({1e9, 0}, up_lat, out_lat) == Approx(5e-3 + 1e-3).epsilon(kEps));
}

TEST_CASE("expected_distinct_nodes") {
  CHECK(hapmoe::expected_distinct_nodes(1, 8, 0, 0) == 1);
  // 4 nodes, top-8: 4 (1 - (3/4)^8) = 4 (1 - 6561/65536) = 4 x 58975 / 65536.
  CHECK(hapmoe::expected_distinct_nodes(4, 8, 0, 0) == Approx(4 * 58975.0 / 65536).epsilon(kEps));
  CHECK(hapmoe::expected_distinct_nodes(4, 8, 0, 0) == Approx(4 * (1 - std::pow(0.75, 8))).epsilon(kEps));
  // 2 nodes top-1: 2 (1 - 1/2) = 1.
  CHECK(hapmoe::expected_distinct_nodes(2, 1, 0, 0) == Approx(1).epsilon(kEps));
  // Group-limited (DeepSeek-V3: 8 groups, 4 chosen) on 8 nodes: 8 (1 - (7/8)^8) = 5.25... capped
  // at 4 x max(1, 8/8) = 4.
  CHECK(hapmoe::expected_distinct_nodes(8, 8, 8, 4) == 4);
  // 16 nodes, 8 groups of 2 nodes, 2 groups chosen: cap 2 x 16/8 = 4 < 16 (1 - (15/16)^8) = 6.45.
  CHECK(hapmoe::expected_distinct_nodes(16, 8, 8, 2) == 4);
  // 4 nodes, 8 groups, 4 chosen: cap 4 x max(1, 0.5) = 4 does not bind: 3.599...
  CHECK(hapmoe::expected_distinct_nodes(4, 8, 8, 4) == Approx(4 * 58975.0 / 65536).epsilon(kEps));
}

TEST_CASE("expected_distinct_ranks") {
  CHECK(hapmoe::expected_distinct_ranks(1, 8) == 1);
  CHECK(hapmoe::expected_distinct_ranks(8, 2) == Approx(8 * 15.0 / 64).epsilon(kEps));  // 1.875
  CHECK(hapmoe::expected_distinct_ranks(16, 2) == Approx(16 * 31.0 / 256).epsilon(kEps));
}

TEST_CASE("ep_dispatch_traffic per dispatcher") {
  using hapmoe::Dispatch;
  // 1000 tokens of 100 bytes, top-2: 2000 token-expert pairs, 200,000 bytes.
  SUBCASE("EP 1 and allgather: no all-to-all traffic") {
    const auto t = hapmoe::ep_dispatch_traffic(Dispatch::kAlltoall, 1000, 100, 2, 1, 1, 0, 0);
    CHECK(t.intra_bytes == 0);
    CHECK(t.inter_bytes == 0);
    const auto g = hapmoe::ep_dispatch_traffic(Dispatch::kAllgather, 1000, 100, 2, 16, 8, 0, 0);
    CHECK(g.intra_bytes + g.inter_bytes == 0);
  }
  SUBCASE("EP 8 inside one node") {
    // alltoall: 7/8 of the pairs go to other GPUs of the node: 200,000 x 7/8.
    const auto t = hapmoe::ep_dispatch_traffic(Dispatch::kAlltoall, 1000, 100, 2, 8, 8, 0, 0);
    CHECK(t.intra_bytes == Approx(175000).epsilon(kEps));
    CHECK(t.inter_bytes == 0);
    // flex: once per distinct rank, 1.875 ranks per token, 7/8 of them remote:
    // 100,000 x 1.875 x 7/8 = 164,062.5.
    const auto d = hapmoe::ep_dispatch_traffic(Dispatch::kDeepEp, 1000, 100, 2, 8, 8, 0, 0);
    CHECK(d.intra_bytes == Approx(164062.5).epsilon(kEps));
    CHECK(d.inter_bytes == 0);
  }
  SUBCASE("EP 16 over 2 nodes, alltoall: one copy per pair that leaves the rank") {
    // intra: 200,000 x 7/16 = 87,500; inter: 200,000 x 8/16 = 100,000.
    const auto t = hapmoe::ep_dispatch_traffic(Dispatch::kAlltoall, 1000, 100, 2, 16, 8, 0, 0);
    CHECK(t.intra_bytes == Approx(87500).epsilon(kEps));
    CHECK(t.inter_bytes == Approx(100000).epsilon(kEps));
  }
  SUBCASE("EP 16 over 2 nodes, flex: once per remote node, then once per rank") {
    // distinct nodes for top-2 of 2: 2 (1 - 1/4) = 1.5; remote share 1.5 x 1/2 = 0.75;
    // inter: 100,000 x 0.75 = 75,000. Ranks hit: 16 (1 - (15/16)^2) = 1.9375; local others
    // 100,000 x 1.9375 x 7/16 = 84,765.625; fan-out 100,000 x 1.9375 x 8/16 x 7/8 = 84,765.625.
    const auto t = hapmoe::ep_dispatch_traffic(Dispatch::kDeepEp, 1000, 100, 2, 16, 8, 0, 0);
    CHECK(t.inter_bytes == Approx(75000).epsilon(kEps));
    CHECK(t.intra_bytes == Approx(169531.25).epsilon(kEps));
  }
  SUBCASE("EP 32 over 4 nodes, top-8: flex sends far less across nodes") {
    // pairs 8000 x 100 B = 800,000. alltoall: inter 800,000 x 24/32 = 600,000,
    // intra 800,000 x 7/32 = 175,000.
    const auto t = hapmoe::ep_dispatch_traffic(Dispatch::kAlltoall, 1000, 100, 8, 32, 8, 0, 0);
    CHECK(t.inter_bytes == Approx(600000).epsilon(kEps));
    CHECK(t.intra_bytes == Approx(175000).epsilon(kEps));
    // flex: 4 (1 - (3/4)^8) x 3/4 remote nodes per token x 100,000 B.
    const auto d = hapmoe::ep_dispatch_traffic(Dispatch::kDeepEp, 1000, 100, 8, 32, 8, 0, 0);
    CHECK(d.inter_bytes == Approx(100000 * 4 * 58975.0 / 65536 * 0.75).epsilon(kEps));
  }
}

TEST_CASE("allgather_dispatch_bytes: every rank's tokens gathered over TP x EP") {
  CHECK(hapmoe::allgather_dispatch_bytes(100, 10, 8) == 8000);
  CHECK(hapmoe::allgather_dispatch_bytes(100, 10, 1) == 0);
}

TEST_CASE("all-to-all links carry their own (lower) efficiency") {
  hapmoe::NodeGroup g;
  g.gpu = round_gpu();
  g.inter_node_gbps = 40;
  CHECK(hapmoe::alltoall_scale_up_link(g).bytes_per_s() == Approx(400e9 * 0.5).epsilon(kEps));
  CHECK(hapmoe::alltoall_scale_out_link(g).bytes_per_s() == Approx(40e9 * 0.25).epsilon(kEps));
  g.gpus_per_node = 8;
  CHECK(hapmoe::ep_ranks_per_node(g, 8, 1) == 8);
  CHECK(hapmoe::ep_ranks_per_node(g, 32, 1) == 8);
  CHECK(hapmoe::ep_ranks_per_node(g, 16, 2) == 4);
}

TEST_CASE("exposed_after_overlap_s") {
  CHECK(hapmoe::exposed_after_overlap_s(10, 4, 0.1) == 6);   // max(10 - 4, 1)
  CHECK(hapmoe::exposed_after_overlap_s(10, 20, 0.1) == 1);  // max(-10, 1): last bucket
  CHECK(hapmoe::exposed_after_overlap_s(10, 20, 0) == 0);
  CHECK(hapmoe::exposed_after_overlap_s(10, 0, 0.5) == 10);
}

// ---------------------------------------------------------------- cost_memory.hpp

TEST_CASE("weight_memory: 18 bytes per param, or 6 + 12/DP with the distributed optimizer") {
  // 1e6 dense params sharded over 4, 2e6 expert params over 2.
  const auto w = hapmoe::weight_memory(1e6, 2e6, 4, 2, true);
  CHECK(w.weights_bytes == 6e6);     // 2 x 3e6
  CHECK(w.gradients_bytes == 12e6);  // 4 x 3e6
  CHECK(w.optimizer_bytes == 15e6);  // 12 x (1e6/4 + 2e6/2)
  CHECK(w.total() == 33e6);
  // Same thing as bytes per parameter: 1e6 x (6 + 12/4) + 2e6 x (6 + 12/2).
  CHECK(w.total() == 1e6 * (6 + 12.0 / 4) + 2e6 * (6 + 12.0 / 2));
  const auto n = hapmoe::weight_memory(1e6, 2e6, 4, 2, false);
  CHECK(n.optimizer_bytes == 36e6);
  CHECK(n.total() == 18 * 3e6);
}

TEST_CASE("in_flight_microbatches: 1F1B and interleaved") {
  // 1F1B: min(pp - stage, m).
  CHECK(hapmoe::in_flight_microbatches(0, 4, 1, 8) == 4);
  CHECK(hapmoe::in_flight_microbatches(3, 4, 1, 8) == 1);
  CHECK(hapmoe::in_flight_microbatches(1, 4, 1, 2) == 2);  // min(3, 2)
  CHECK(hapmoe::in_flight_microbatches(0, 1, 1, 8) == 1);
  // Interleaved vpp 2, pp 4: min(m vpp, 2 (pp - stage - 1) + (vpp - 1) pp + 1) / vpp.
  CHECK(hapmoe::in_flight_microbatches(0, 4, 2, 8) == 5.5);  // min(16, 6 + 4 + 1) / 2
  CHECK(hapmoe::in_flight_microbatches(3, 4, 2, 8) == 2.5);  // min(16, 0 + 4 + 1) / 2
  CHECK(hapmoe::in_flight_microbatches(0, 4, 2, 2) == 2);    // min(4, 11) / 2
  // vpp 4, pp 2, stage 0: min(32, 2 + 6 + 1) / 4 = 9/4.
  CHECK(hapmoe::in_flight_microbatches(0, 2, 4, 8) == 2.25);
}

static hapmoe::Recompute modules(unsigned bits) { return hapmoe::Recompute::of_modules(bits); }

// Per --recompute-modules entry, what Megatron's TE layer spec frees (cost_memory.cpp comment).
TEST_CASE("attention_activation_bytes, GQA and MLA, per recompute module") {
  using namespace hapmoe;
  const ModelSpec m = small_moe();
  ActivationInputs in = inputs_100_tp2();
  // GQA: q, k, v = (4 + 2 x 2) x 16 = 128 per token; core out 4 x 16 = 64.
  // elems = 100 x 64 (norm in) + 100 x 64 (norm out) + 100 x 128 / 2 + 100 x 64 / 2
  //       = 6400 + 6400 + 6400 + 3200 = 22,400 -> 44,800 B; softmax stats 100 x 4 / 2 x 4 = 800 B.
  CHECK(attention_activation_bytes(m, in) == 45600);
  // Sequence parallel: the two hidden-size tensors hold 50 tokens: 3200 + 3200 + 6400 + 3200.
  in.sequence_parallel = true;
  CHECK(attention_activation_bytes(m, in) == 16000 * 2 + 800);
  in.sequence_parallel = false;
  // core_attn: q, k, v stay (checkpoint inputs), the output stays (linear_proj's input): only the
  // 800 B of softmax statistics go.
  in.recompute = modules(kRecomputeCoreAttn);
  CHECK(attention_activation_bytes(m, in) == 44800);
  // layernorm: a GQA layer's input norm is fused into linear_qkv (IdentityOp): nothing changes.
  in.recompute = modules(kRecomputeLayernorm);
  CHECK(attention_activation_bytes(m, in) == 45600);
  // FP8 GEMM inputs (norm out, core out) at 1 B: 12,800 x 2 + 9600 x 1 + 800, plus the
  // attention kernel's own BF16 output 3200 x 2 = 6400 -> 42,400; core_attn drops 800 + 6400.
  in.recompute = Recompute::kNone;
  in.gemm_input_bytes = kFp8ActivationBytes;
  CHECK(attention_activation_bytes(m, in) == 42400);
  in.recompute = modules(kRecomputeCoreAttn);
  CHECK(attention_activation_bytes(m, in) == 35200);

  // MLA: 4 heads, qk 16 + rope 8, v 16, q_lora 32, kv_lora 16.
  ModelSpec mla = m;
  mla.multi_latent_attention = true;
  mla.qk_head_dim = 16;
  mla.qk_pos_emb_head_dim = 8;
  mla.v_head_dim = 16;
  mla.q_lora_rank = 32;
  mla.kv_lora_rank = 16;
  in = inputs_100_tp2();
  // q, k: 4 x 24 each; v: 4 x 16 -> 256 per token; core out 64; latents (32 + 16 + 8) per token
  // replicated over TP.
  // elems = 6400 + 6400 + 100 x 256 / 2 + 100 x 64 / 2 + 100 x 56 = 6400 + 6400 + 12800 + 3200
  //       + 5600 = 34,400 -> 68,800 B + 800 B.
  CHECK(attention_activation_bytes(mla, in) == 69600);
  // mla_up_proj: the up-projected q, k, v (12,800 elements) go.
  in.recompute = modules(kRecomputeMlaUpProj);
  CHECK(attention_activation_bytes(mla, in) == 69600 - 25600);
  // layernorm: MLA's input norm is a separate TENorm: its output (6400 elements) goes.
  in.recompute = modules(kRecomputeLayernorm);
  CHECK(attention_activation_bytes(mla, in) == 69600 - 12800);
  in.recompute = modules(kRecomputeCoreAttn | kRecomputeLayernorm | kRecomputeMlaUpProj);
  CHECK(attention_activation_bytes(mla, in) == 69600 - 25600 - 12800 - 800);
}

TEST_CASE("dense_mlp_activation_bytes, per recompute module") {
  using namespace hapmoe;
  const ModelSpec m = small_moe();
  ActivationInputs in = inputs_100_tp2();
  // F 128, TP 2: norm in 6400 + norm out 6400 + fc1 out (gate, up) 100 x 128 x 2 / 2 = 12,800
  // + act out 100 x 128 / 2 = 6400 -> 32,000 elements, 64,000 B.
  CHECK(dense_mlp_activation_bytes(m, 128, in) == 64000);
  // layernorm: fused into linear_fc1 for dense layers: nothing changes.
  in.recompute = modules(kRecomputeLayernorm | kRecomputeCoreAttn | kRecomputeMoeAct);
  CHECK(dense_mlp_activation_bytes(m, 128, in) == 64000);
  // mlp: the checkpoint keeps its input (the norm input, 6400 elements) only.
  in.recompute = modules(kRecomputeMlp);
  CHECK(dense_mlp_activation_bytes(m, 128, in) == 12800);
  ModelSpec gelu = m;
  gelu.swiglu = false;
  in.recompute = Recompute::kNone;
  // no GLU: fc1 out 100 x 128 / 2 = 6400: 6400 x 4 = 25,600 elements.
  CHECK(dense_mlp_activation_bytes(gelu, 128, in) == 25600 * 2);
}

TEST_CASE("moe_activation_bytes, per recompute module") {
  using namespace hapmoe;
  ModelSpec m = small_moe();
  ActivationInputs in = inputs_100_tp2();
  // copies = k x t / tp x imbalance = 2 x 100 / 2 = 100.
  // elems = 6400 + 6400 + 100 x 1 x 64 (permuted in) + 100 x 32 x 2 (fc1) + 100 x 32 (act)
  //       = 12,800 + 6400 + 6400 + 3200 = 28,800 -> 57,600 B (fc2's output is not kept: the
  // probabilities are applied in the activation); router probabilities 100 x 8 x 4 B = 3200.
  CHECK(moe_activation_bytes(m, in) == 60800);
  // ETP 2, imbalance 1.5: copies 150; 12,800 + 150 x 2 x 64 + 150 x 64 + 150 x 32
  //   = 12,800 + 19,200 + 9600 + 4800 = 46,400 -> 92,800 + 3200.
  in.etp = 2;
  in.load_imbalance = 1.5;
  CHECK(moe_activation_bytes(m, in) == 96000);
  in.recompute = modules(kRecomputeMoeAct);  // - activation output 4800 elements
  CHECK(moe_activation_bytes(m, in) == 96000 - 9600);
  in.recompute = modules(kRecomputeLayernorm);  // - pre-MLP norm output 6400 elements
  CHECK(moe_activation_bytes(m, in) == 96000 - 12800);
  in.recompute = modules(kRecomputeMoeAct | kRecomputeLayernorm);
  CHECK(moe_activation_bytes(m, in) == 73600);
  // moe: the block keeps its input (the norm output) and the norm keeps its input: 2 x 6400.
  in.recompute = modules(kRecomputeMoe | kRecomputeMoeAct);
  CHECK(moe_activation_bytes(m, in) == 25600);
  in.recompute = modules(kRecomputeMoe | kRecomputeLayernorm);
  CHECK(moe_activation_bytes(m, in) == 12800);
  // core_attn and mlp do not touch the MoE block.
  in.recompute = modules(kRecomputeCoreAttn | kRecomputeMlp);
  CHECK(moe_activation_bytes(m, in) == 96000);
  // Shared expert of width 64 adds fc1 out 100 x 64 x 2 / 2 = 6400 el. and act out 3200 el.
  // = 19,200 B (its input is the norm output counted above); shared_experts drops them.
  in = inputs_100_tp2();
  m.moe_shared_expert_intermediate_size = 64;
  CHECK(moe_activation_bytes(m, in) == 60800 + 19200);
  in.recompute = modules(kRecomputeSharedExperts);
  CHECK(moe_activation_bytes(m, in) == 60800);
}

TEST_CASE("layer_activation_bytes, layer_working_bytes, logits") {
  const hapmoe::ModelSpec m = small_moe();
  hapmoe::ActivationInputs in = inputs_100_tp2();
  // Layer 0 dense: attention 45,600 + MLP 64,000. Layer 1 MoE: 45,600 + 60,800.
  CHECK(hapmoe::layer_activation_bytes(m, 0, in) == 45600 + 64000);
  CHECK(hapmoe::layer_activation_bytes(m, 1, in) == 45600 + 60800);
  // Full recompute keeps the layer input only: 100 x 64 x 2 B; with SP 50 tokens.
  in.recompute = hapmoe::Recompute::kFull;
  CHECK(hapmoe::layer_activation_bytes(m, 1, in) == 12800);
  CHECK(hapmoe::layer_working_bytes(m, 1, in) == 45600 + 60800);  // rebuilt without recompute
  in.sequence_parallel = true;
  CHECK(hapmoe::layer_activation_bytes(m, 1, in) == 6400);
  // fp32 logits: 100 tokens x 1024 / 2 x 4 B.
  CHECK(hapmoe::logits_activation_bytes(100, 2, 1024) == 204800);
}

// schedule.hpp: tests/cost/schedule_test.cpp.

// ---------------------------------------------------------------- example plans

namespace {

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Every shipped example with a plan: its own plan, or the search's two best plans.
std::vector<std::pair<std::string, nlohmann::json>> example_plans() {
  std::vector<std::pair<std::string, nlohmann::json>> out;
  const std::string dir = std::string(HAPMOE_SOURCE_DIR) + "/examples";
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".json") names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    const nlohmann::json doc = nlohmann::json::parse(read_text(dir + "/" + name));
    if (doc.contains("plan")) {
      out.emplace_back(name, doc);
      continue;
    }
    const auto result = nlohmann::json::parse(hapmoe::api::plan(doc.dump()));
    REQUIRE(result.value("ok", false));
    for (size_t i = 0; i < std::min<size_t>(2, result["plans"].size()); ++i) {
      nlohmann::json with_plan = doc;
      with_plan["plan"] = result["plans"][i]["plan"];
      out.emplace_back(name + " (searched #" + std::to_string(i + 1) + ")", with_plan);
    }
  }
  return out;
}

double iteration_time_s(const nlohmann::json& doc) {
  const auto result = nlohmann::json::parse(hapmoe::api::evaluate(doc.dump()));
  REQUIRE_MESSAGE(result.value("ok", false), result.dump());
  return result["plans"][0]["metrics"]["iteration_time_s"].get<double>();
}

}  // namespace

TEST_CASE("FP8 is at most 1% slower than BF16 on the GPU (its casts are kernels too), for every example plan") {
  // FP8 adds host work (a quantisation op per GEMM input), so a host-bound plan may be slower in
  // FP8; with the host cost of a launch at zero only the GPU side is compared.
  const auto presets = hapmoe::load_builtin_presets();
  int compared = 0;
  for (const auto& [plan_name, doc] : example_plans()) {
    const std::string& name = plan_name;  // clang 14 cannot capture a structured binding
    CAPTURE(name);
    nlohmann::json bf16 = doc, fp8 = doc;
    for (const char* k : {"fp8_recipe", "fp8_param_gather", "fp8_dot_product_attention"}) bf16["training"].erase(k);
    bf16["training"]["precision"] = "bf16";
    fp8["training"]["precision"] = "fp8";
    auto s8 = hapmoe::parse_scenario(fp8, presets), s16 = hapmoe::parse_scenario(bf16, presets);
    REQUIRE(s8.ok());
    REQUIRE(s16.ok());
    for (auto* s : {&s8.value(), &s16.value()}) {
      for (hapmoe::NodeGroup& g : s->cluster.groups) g.gpu.host_launch_us = 0;
    }
    const auto e8 = hapmoe::evaluate_plan(*s8, *s8->plan);
    // A GPU without FP8, or (an A100 beside an H100) with no recipe in common.
    if (!e8 && (e8.error().code == "rule:fp8_needs_hardware" || e8.error().code == "rule:fp8_common_recipe")) continue;
    REQUIRE_MESSAGE(e8.ok(), e8.error().message);
    const auto e16 = hapmoe::evaluate_plan(*s16, *s16->plan);
    REQUIRE_MESSAGE(e16.ok(), e16.error().message);
    // Experts narrower than 1024: the casts of their short GEMMs cost what FP8 saves on them (as in
    // Megatron-Bridge's Qwen3-30B-A3B H100 recipes, whose BF16 run outpaces the FP8 one).
    if (s8->model.is_moe() && s8->model.moe_ffn_hidden_size < 1024) continue;
    // The casts are kernels too, and each kernel boundary costs GPU time (kKernelGapS): with
    // Hopper's fitted 1.19x FP8 GEMM rate, Qwen3-235B on H100 (C4's plan) gains less from FP8 than
    // its casts' boundaries cost (0.8%); never more than 1%.
    CHECK(e8->metrics.iteration_time_s <= 1.01 * e16->metrics.iteration_time_s);
    ++compared;
  }
  CHECK(compared >= 6);
}

TEST_CASE("a host-bound plan can be slower in per-tensor FP8 than in BF16 (its casts are launches too)") {
  // Qwen3-30B-A3B at MBS 1 on H100 is host-bound (C3): tensorwise FP8 adds an amax and a cast per
  // GEMM input of each of its 16 local experts.
  const std::string dir = std::string(HAPMOE_SOURCE_DIR) + "/examples/";
  nlohmann::json fp8 = nlohmann::json::parse(read_text(dir + "c3-qwen3-30b-a3b-h100-16.json")), bf16 = fp8;
  for (const char* k : {"fp8_recipe", "fp8_param_gather"}) bf16["training"].erase(k);
  bf16["training"]["precision"] = "bf16";
  CHECK(iteration_time_s(fp8) > iteration_time_s(bf16));
}

TEST_CASE("no communication term of an example plan implies more than its link's bandwidth") {
  for (const auto& [plan_name, doc] : example_plans()) {
    const std::string& name = plan_name;  // clang 14 cannot capture a structured binding
    CAPTURE(name);
    const auto s = hapmoe::parse_scenario(doc, hapmoe::load_builtin_presets());
    REQUIRE(s.ok());
    const hapmoe::PlanSpec& p = *s->plan;
    const hapmoe::ModelSpec& m = s->model;
    const double tokens = static_cast<double>(p.micro_batch_size) * s->training.seq_length / p.cp / p.tp;
    const double token_bytes = 2.0 * m.hidden_size;
    for (const auto& st : p.stages) {
      const hapmoe::NodeGroup& g = s->cluster.groups[st.group];
      const int ep_local = hapmoe::ep_ranks_per_node(g, p.ep, p.etp);
      const auto traffic = hapmoe::ep_dispatch_traffic(p.dispatch, tokens, token_bytes,
                                                       m.moe_router_topk, p.ep, ep_local, m.moe_router_num_groups,
                                                       m.moe_router_group_topk);
      const double a2a_s =
          hapmoe::alltoall_time_s(traffic, hapmoe::dispatch_scale_up_link(g, p.dispatch),
                                  hapmoe::dispatch_scale_out_link(g, p.dispatch));
      if (traffic.inter_bytes > 0) CHECK(traffic.inter_bytes / a2a_s <= g.inter_node_gbps * 1e9);
      if (traffic.intra_bytes > 0) CHECK(traffic.intra_bytes / a2a_s <= g.gpu.intra_node_gbps * 1e9);
      if (s->training.moe_token_dispatcher_type == hapmoe::Dispatcher::kAlltoall) {
        // alltoall: one copy per (token, expert) pair whose expert is off the node.
        CHECK(traffic.inter_bytes ==
              Approx(tokens * m.moe_router_topk * token_bytes * (p.ep - ep_local) / p.ep).epsilon(1e-12));
      }
      // TP and DP ring collectives on the link their group spans.
      const hapmoe::Link tp_link = hapmoe::group_link(g, p.tp);
      const double tp_bytes = tokens * p.tp * token_bytes;
      if (p.tp > 1) {
        const double tp_s = hapmoe::ring_collective_time_s(tp_bytes, p.tp, tp_link);
        CHECK(tp_bytes * (p.tp - 1) / p.tp / tp_s <= tp_link.gbps * 1e9);
      }
      const long long stage_gpus = static_cast<long long>(p.tp) * p.cp * p.dp;
      const hapmoe::Link dp_link = hapmoe::group_link(g, stage_gpus);
      const double grad_bytes = 4e9;
      if (p.dp > 1) {
        const double dp_s = hapmoe::ring_collective_time_s(grad_bytes, p.dp, dp_link);
        CHECK(grad_bytes * (p.dp - 1) / p.dp / dp_s <= dp_link.gbps * 1e9);
      }
    }
  }
}

TEST_CASE("fp8_recipe_for: the request if every GPU runs it, else the best shared recipe") {
  hapmoe::GpuSpec hopper = round_gpu(), blackwell = round_gpu(), ampere = no_fp8_gpu();
  hopper.fp8_recipes = {"tensorwise", "blockwise"};
  blackwell.fp8_recipes = {"mxfp8", "tensorwise", "blockwise"};
  CHECK(hapmoe::fp8_recipe_for("", {&blackwell}) == "mxfp8");
  CHECK(hapmoe::fp8_recipe_for("", {&blackwell, &hopper}) == "tensorwise");
  CHECK(hapmoe::fp8_recipe_for("blockwise", {&blackwell, &hopper}) == "blockwise");
  CHECK(hapmoe::fp8_recipe_for("mxfp8", {&blackwell, &hopper}).empty());
  CHECK(hapmoe::fp8_recipe_for("", {&hopper, &ampere}).empty());
}

TEST_CASE("GPU presets: capabilities are fields, constants carry their source") {
  const auto catalog = hapmoe::load_builtin_presets();
  for (auto it = catalog.gpus.all().begin(); it != catalog.gpus.all().end(); ++it) {
    CAPTURE(it.key());
    const auto g = hapmoe::parse_gpu(nlohmann::json(it.key()), "gpu", catalog);
    REQUIRE(g.ok());
    CHECK(!g->generation.empty());
    CHECK(!g->efficiency_source.empty());
    CHECK(g->host_link_gbps > 0);
    CHECK(g->fp8_tflops.has_value() == !g->fp8_recipes.empty());  // FP8 rate <=> an FP8 recipe
    // An efficiency not fitted on a calibration row of its own generation is listed as assumed.
    if (g->generation != "hopper" && g->generation != "blackwell") {
      CHECK(std::find(g->assumed.begin(), g->assumed.end(), "gemm_efficiency") != g->assumed.end());
    }
  }
}

TEST_CASE("Megatron command carries the recipe's precision, optimizer and capability settings") {
  const std::string dir = std::string(HAPMOE_SOURCE_DIR) + "/examples/";
  auto megatron = [](const nlohmann::json& doc) {
    const auto r = nlohmann::json::parse(hapmoe::api::evaluate(doc.dump()));
    REQUIRE_MESSAGE(r.value("ok", false), r.dump());
    return r["plans"][0]["megatron"];
  };
  nlohmann::json c5 = nlohmann::json::parse(read_text(dir + "c5-deepseek-v3-gb200-256.json"));
  auto m = megatron(c5);
  const std::string args = m["args"].get<std::string>();
  for (const char* flag : {"--fp8-format e4m3", "--fp8-recipe mxfp8", "--fp8-param-gather", "--grad-reduce-in-bf16",
                           "--use-precision-aware-optimizer", "--main-grads-dtype bf16", "--main-params-dtype fp32",
                           "--exp-avg-dtype bf16", "--exp-avg-sq-dtype bf16",
                           "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep",
                           "--cuda-graph-impl transformer_engine --cuda-graph-modules attn moe_router moe_preprocess"}) {
    CAPTURE(flag);
    CHECK(args.find(flag) != std::string::npos);
  }
  CHECK(args.find("--overlap-moe-expert-parallel-comm") == std::string::npos);  // off in the 26.02 recipe
  // The 26.06 recipe of the same mesh: full-iteration graphs on HybridEP's static rank budget,
  // with the paged stash and EP overlap.
  nlohmann::json full = c5;
  full["training"]["moe_token_dispatcher_type"] = "flex";
  full["training"]["moe_expert_rank_capacity_factor"] = 1.5;
  full["training"]["moe_paged_stash"] = true;
  full["plan"]["cuda_graph_impl"] = "full_iteration";
  full["plan"].erase("cuda_graph_modules");
  full["plan"]["ep_comm_overlap"] = true;
  const std::string full_args = megatron(full)["args"].get<std::string>();
  for (const char* flag : {"--cuda-graph-impl full_iteration --no-check-for-nan-in-loss-and-grad --te-rng-tracker",
                           "--moe-expert-rank-capacity-factor 1.5 --moe-use-grouped-tensor --moe-paged-stash",
                           "--overlap-moe-expert-parallel-comm --delay-wgrad-compute"}) {
    CAPTURE(flag);
    CHECK(full_args.find(flag) != std::string::npos);
  }
  CHECK(full_args.find("--cuda-graph-modules") == std::string::npos);
  // TP 2 on GB200 (compute capability 10): no CUDA_DEVICE_MAX_CONNECTIONS; on H100 (9.0) it is set.
  c5["plan"]["tp"] = 2;
  c5["plan"]["dp"] = 32;
  c5["plan"]["sequence_parallel"] = true;
  CHECK_FALSE(megatron(c5)["env"].contains("CUDA_DEVICE_MAX_CONNECTIONS"));
  nlohmann::json c4 = nlohmann::json::parse(read_text(dir + "c4-qwen3-235b-a22b-h100-256.json"));
  const auto m4 = megatron(c4);
  CHECK(m4["env"]["CUDA_DEVICE_MAX_CONNECTIONS"] == "32");  // TP 2 on H100 with EP overlap: its streams
  c4["plan"]["ep_comm_overlap"] = false;
  CHECK(megatron(c4)["env"]["CUDA_DEVICE_MAX_CONNECTIONS"] == "1");  // TP 2 on H100 alone
  CHECK(m4["args"].get<std::string>().find("--fp8-recipe tensorwise") != std::string::npos);
}

TEST_CASE("new training and GPU fields: bad values name the field") {
  const std::string dir = std::string(HAPMOE_SOURCE_DIR) + "/examples/";
  const nlohmann::json base = nlohmann::json::parse(read_text(dir + "c3-qwen3-30b-a3b-h100-16.json"));
  auto field_of_error = [](const nlohmann::json& doc) {
    const auto r = nlohmann::json::parse(hapmoe::api::validate(doc.dump()));
    return r.value("ok", true) ? std::string("ok") : r["error"]["field"].get<std::string>();
  };
  nlohmann::json d = base;
  d["training"]["optimizer"] = {{"main_grads_dtype", "bf16"}};
  CHECK(field_of_error(d) == "training.optimizer.precision_aware");
  d = base;
  d["training"]["optimizer"] = {{"precision_aware", true}, {"exp_avg_dtype", "fp4"}};
  CHECK(field_of_error(d) == "training.optimizer.exp_avg_dtype");
  d = base;
  d["training"]["fp8_recipe"] = "delayed";
  CHECK(field_of_error(d) == "training.fp8_recipe");
  d = base;
  d["training"]["fp8_param_gather"] = true;
  d["training"]["use_distributed_optimizer"] = false;
  d["training"]["overlap_param_gather"] = false;
  CHECK(field_of_error(d) == "training.fp8_param_gather");
  d = base;
  d["cluster"] = {{"groups", {{{"gpu", {{"preset", "h100-sxm"}, {"fp8_recipes", {"tensorwise", "nvfp4"}}}}, {"nodes", 2}}}}};
  CHECK(field_of_error(d) == "cluster.groups[0].gpu.fp8_recipes[1]");
  d["cluster"]["groups"][0]["gpu"] = {{"preset", "h100-sxm"}, {"assumed", {"gemm_eficiency"}}};
  CHECK(field_of_error(d) == "cluster.groups[0].gpu.assumed[0]");
}

TEST_CASE("error band: a plan's range and basis come from its GPUs' leave-one-out band") {
  // The example examples/c*.json rows are calibration rows C1-C5 (tests/calibration checks them).
  nlohmann::json doc = nlohmann::json::parse(
      read_text(std::string(HAPMOE_SOURCE_DIR) + "/examples/c1-mixtral-8x7b-h100-64.json"));
  auto metrics = [](const nlohmann::json& d) {
    const auto res = nlohmann::json::parse(hapmoe::api::evaluate(d.dump()));
    REQUIRE_MESSAGE(res.value("ok", false), res.dump());
    return res["plans"][0]["metrics"];
  };
  const auto presets = hapmoe::load_builtin_presets();
  const auto h100 = hapmoe::parse_gpu(nlohmann::json("h100-sxm"), "gpu", presets).value();
  const auto m = metrics(doc);
  const double t = m["iteration_time_s"].get<double>(), band = m["iteration_time_error_fraction"].get<double>();
  CHECK(band == h100.error_fraction);  // Hopper's band
  CHECK(m["iteration_time_range_s"][0].get<double>() == Approx(t * (1 - band)).epsilon(1e-3));
  CHECK(m["iteration_time_range_s"][1].get<double>() == Approx(t * (1 + band)).epsilon(1e-3));
  CHECK(m["iteration_time_error_calibrated"].get<bool>());
  CHECK(m["error_basis"].get<std::string>().find("leave-one-out") != std::string::npos);
  // A GPU without published runs: flagged uncalibrated, with the wide default band.
  doc["cluster"] = {{"groups", {{{"gpu", "mi300x"}, {"nodes", 8}}}}};
  const auto u = metrics(doc);
  CHECK_FALSE(u["iteration_time_error_calibrated"].get<bool>());
  CHECK(u["iteration_time_error_fraction"].get<double>() == hapmoe::GpuSpec{}.error_fraction);
  CHECK(u["iteration_time_error_fraction"].get<double>() > band);
  CHECK(u["error_basis"].get<std::string>().find("uncalibrated") != std::string::npos);
}
