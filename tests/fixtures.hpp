// Small hand-checkable specs shared by the unit tests.
#pragma once

#include "hapmoe/specs.hpp"

namespace hapmoe::testing {

// h 64, 4 heads of 16, 2 query groups, F 128 (SwiGLU), 2 layers, vocab 1000.
inline ModelSpec tiny_dense_model() {
  ModelSpec m;
  m.num_layers = 2;
  m.hidden_size = 64;
  m.ffn_hidden_size = 128;
  m.num_attention_heads = 4;
  m.num_query_groups = 2;
  m.kv_channels = 16;
  m.vocab_size = 1000;
  m.swiglu = true;
  return m;
}

// tiny_dense_model() with 8 experts top-2 of width 32; layer 0 dense, layer 1 MoE.
inline ModelSpec tiny_moe_model() {
  ModelSpec m = tiny_dense_model();
  m.num_experts = 8;
  m.moe_router_topk = 2;
  m.moe_ffn_hidden_size = 32;
  m.moe_layer_freq = {0, 1};
  return m;
}

}  // namespace hapmoe::testing
