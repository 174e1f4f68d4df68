// schedule.hpp / schedule.cpp: the pipeline objective (1F1B and interleaved) and pipeline_time's
// breakdown against hand-computed numbers, and 1F1B against a flow-shop recurrence that knows
// nothing of the closed form.
#include "hapmoe/schedule.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

using doctest::Approx;

namespace {

constexpr double kEps = 1e-12;

// Makespan of m identical micro-batches through stages with per-micro-batch times c (each stage
// runs one at a time, in order: C[j][i] = max(C[j-1][i], C[j][i-1]) + c_i), the pipeline part of
// a 1F1B iteration when a stage's forward and backward are one block.
double flow_shop_makespan(const std::vector<double>& c, long long m) {
  std::vector<double> done(c.size(), 0.0);
  for (long long j = 0; j < m; ++j) {
    double ready = 0;
    for (size_t i = 0; i < c.size(); ++i) {
      done[i] = std::max(done[i], ready) + c[i];
      ready = done[i];
    }
  }
  return done.back();
}

}  // namespace

TEST_CASE("iteration_time_s: 1F1B and interleaved") {
  // 1F1B: sum + (m - 1) max + tail = 10 + 7 x 4 + 1.
  CHECK(hapmoe::iteration_time_s(10, 4, 1, 8, 1) == 39);
  // vpp 2: 10/2 + (8 - 1/2) x 4 + 1 = 5 + 30 + 1.
  CHECK(hapmoe::iteration_time_s(10, 4, 1, 8, 2) == 36);
  // vpp 4: 10/4 + (8 - 1/4) x 4 + 0 = 2.5 + 31.
  CHECK(hapmoe::iteration_time_s(10, 4, 0, 8, 4) == 33.5);
}

TEST_CASE("pipeline_time and bubble fraction") {
  SUBCASE("equal stages: bubble (p - 1) / (m + p - 1)") {
    const auto t = hapmoe::pipeline_time({1, 1, 1, 1}, {0, 0, 0, 0}, 8, 1);
    CHECK(t.pipeline_s == 11);  // 4 + 7
    CHECK(t.tail_s == 0);
    CHECK(t.iteration_s == 11);
    CHECK(t.bubble_fraction == Approx(3.0 / 11).epsilon(kEps));  // 1 - 32 / 44
  }
  SUBCASE("unequal stages, 1F1B") {
    // sum 10, max 4, max tail 1: T = 10 + 28 + 1 = 39, pipeline 38.
    // busy 10 x 8 = 80 of 4 x 38 = 152 stage-seconds.
    const auto t = hapmoe::pipeline_time({2, 4, 3, 1}, {0.5, 1, 0.2, 0}, 8, 1);
    CHECK(t.iteration_s == 39);
    CHECK(t.tail_s == 1);
    CHECK(t.pipeline_s == 38);
    CHECK(t.bubble_fraction == Approx(1 - 80.0 / 152).epsilon(kEps));
  }
  SUBCASE("unequal stages, interleaved vpp 2") {
    // pipeline 5 + 7.5 x 4 = 35; busy 80 of 140.
    const auto t = hapmoe::pipeline_time({2, 4, 3, 1}, {0.5, 1, 0.2, 0}, 8, 2);
    CHECK(t.pipeline_s == 35);
    CHECK(t.iteration_s == 36);
    CHECK(t.bubble_fraction == Approx(3.0 / 7).epsilon(kEps));
  }
  SUBCASE("one stage: no bubble") {
    const auto t = hapmoe::pipeline_time({2}, {0.5}, 8, 1);
    CHECK(t.pipeline_s == 16);
    CHECK(t.iteration_s == 16.5);
    CHECK(t.bubble_fraction == 0);
  }
}

TEST_CASE("pipeline_time: 1F1B equals the flow-shop recurrence on generated stage times") {
  uint64_t x = 12345;
  auto next = [&] {  // xorshift64: the same numbers everywhere
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return x;
  };
  int checked = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int pp = 1 + static_cast<int>(next() % 6);
    const long long m = 1 + static_cast<long long>(next() % 12);
    std::vector<double> c(pp), tail(pp);
    for (int i = 0; i < pp; ++i) {
      c[i] = 0.5 + static_cast<double>(next() % 1000) / 100;
      tail[i] = static_cast<double>(next() % 100) / 50;
    }
    CAPTURE(trial);
    const auto t = hapmoe::pipeline_time(c, tail, m, 1);
    const double makespan = flow_shop_makespan(c, m);
    CHECK(t.pipeline_s == Approx(makespan).epsilon(kEps));
    CHECK(t.tail_s == *std::max_element(tail.begin(), tail.end()));
    CHECK(t.iteration_s == Approx(makespan + t.tail_s).epsilon(kEps));
    double sum = 0;
    for (double v : c) sum += v;
    const double idle = 1 - static_cast<double>(m) * sum / (pp * makespan);
    CHECK(t.bubble_fraction == Approx(idle < 1e-12 ? 0 : idle).epsilon(1e-9));
    ++checked;
  }
  CHECK(checked == 200);
}

TEST_CASE("pipeline_time: interleaving divides the bubble of a balanced pipeline by vpp") {
  // Balanced: p stages of t per micro-batch. T = m t + (p - 1) t / v; bubble (p - 1) / (v m + p -
  // 1).
  for (int p : {2, 4, 8}) {
    for (int v : {1, 2, 3, 4}) {
      for (long long m : {1LL, 4LL, 16LL}) {
        CAPTURE(p);
        CAPTURE(v);
        CAPTURE(m);
        const double t = 0.25;
        const auto r =
            hapmoe::pipeline_time(std::vector<double>(p, t), std::vector<double>(p, 0), m, v);
        CHECK(r.pipeline_s == Approx(m * t + (p - 1) * t / v).epsilon(kEps));
        CHECK(r.bubble_fraction == Approx((p - 1.0) / (v * m + p - 1.0)).epsilon(1e-9));
        if (v > 1) {
          const auto one =
              hapmoe::pipeline_time(std::vector<double>(p, t), std::vector<double>(p, 0), m, 1);
          CHECK(r.pipeline_s - m * t == Approx((one.pipeline_s - m * t) / v).epsilon(1e-9));
        }
      }
    }
  }
}

TEST_CASE("pipeline_time: one micro-batch, empty and zero pipelines, tails") {
  // m = 1: each stage works once, T = sum c; the idle share is 1 - 1/p whatever the times.
  const auto one = hapmoe::pipeline_time({3, 1, 2}, {0, 0, 0}, 1, 1);
  CHECK(one.pipeline_s == 6);
  CHECK(one.bubble_fraction == Approx(2.0 / 3).epsilon(kEps));
  // Interleaved with m = 1: 6/2 + (1 - 1/2) x 3 = 4.5; busy 6 of 3 x 4.5.
  const auto one_v = hapmoe::pipeline_time({3, 1, 2}, {0, 0, 0}, 1, 2);
  CHECK(one_v.pipeline_s == 4.5);
  CHECK(one_v.bubble_fraction == Approx(1 - 6.0 / 13.5).epsilon(kEps));
  // Only the largest tail counts (stages reduce and step in parallel), added after the pipeline.
  const auto tails = hapmoe::pipeline_time({1, 1}, {0.5, 2.5}, 4, 1);
  CHECK(tails.tail_s == 2.5);
  CHECK(tails.pipeline_s == 5);
  CHECK(tails.iteration_s == 7.5);
  // No stage work: no pipeline and no bubble, the tail is the iteration.
  const auto idle = hapmoe::pipeline_time({0, 0}, {1, 0}, 8, 2);
  CHECK(idle.pipeline_s == 0);
  CHECK(idle.bubble_fraction == 0);
  CHECK(idle.iteration_s == 1);
  const auto empty = hapmoe::pipeline_time({}, {}, 8, 1);
  CHECK(empty.iteration_s == 0);
  CHECK(empty.bubble_fraction == 0);
}

TEST_CASE("iteration_time_s is what pipeline_time reports, and grows with each argument") {
  const std::vector<double> c = {2, 4, 3, 1}, tail = {0.5, 1, 0.2, 0};
  for (int v : {1, 2, 4}) {
    for (long long m : {4LL, 8LL}) {
      const auto t = hapmoe::pipeline_time(c, tail, m, v);
      CHECK(t.iteration_s == hapmoe::iteration_time_s(10, 4, 1, m, v));
    }
  }
  // The DP's bounds rely on it never decreasing in sum, max and tail (m >= 1).
  const double base = hapmoe::iteration_time_s(10, 4, 1, 8, 2);
  CHECK(hapmoe::iteration_time_s(11, 4, 1, 8, 2) > base);
  CHECK(hapmoe::iteration_time_s(10, 5, 1, 8, 2) > base);
  CHECK(hapmoe::iteration_time_s(10, 4, 2, 8, 2) > base);
  CHECK(hapmoe::iteration_time_s(10, 4, 1, 9, 2) > base);
  // More chunks: less bubble (p > 1, sum > max).
  CHECK(hapmoe::iteration_time_s(10, 4, 1, 8, 4) < base);
}
