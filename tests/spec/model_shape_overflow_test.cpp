// model_shape.hpp at the largest dimensions the scenario accepts (4096 heads x 2^20 kv channels,
// hidden 2^20, vocab 2^24): products of sizes are computed in double, never in 32-bit int (under
// UBSan a wrapped product aborts the suite).
#include <doctest/doctest.h>

#include <cmath>

#include "hapmoe/model_shape.hpp"

TEST_CASE("parameter counts do not wrap at the largest accepted dimensions") {
  hapmoe::ModelSpec m;
  m.num_layers = 2;
  m.hidden_size = 1 << 20;
  m.ffn_hidden_size = 1 << 20;
  m.num_attention_heads = 4096;
  m.num_query_groups = 4096;
  m.kv_channels = 1 << 20;
  m.vocab_size = 1 << 24;
  m.swiglu = true;
  const double h = m.hidden_size, a = 4096, d = 1 << 20;
  const auto s = hapmoe::derive_model_shape(m, 1);
  CHECK(s.attention_params == doctest::Approx(h * (a * d + 2 * a * d) + a * d * h));
  CHECK(s.attention_params > 1e16);
  CHECK(s.padded_vocab == 1 << 24);
  CHECK(s.embedding_params == doctest::Approx(h * (1 << 24)));
  const double flops = hapmoe::megatron_model_flops(m, 1, 1024, 1 << 20);
  CHECK(flops > 0);
  CHECK(std::isfinite(flops));
}
