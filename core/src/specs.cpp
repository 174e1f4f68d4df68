#include "hapmoe/specs.hpp"

namespace hapmoe {

const char* to_string(Precision p) { return p == Precision::kFp8 ? "fp8" : "bf16"; }

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
    default: return "none";
  }
}

const char* to_string(Dispatcher d) {
  switch (d) {
    case Dispatcher::kAllgather: return "allgather";
    case Dispatcher::kFlex: return "flex";
    default: return "alltoall";
  }
}

const char* to_string(SearchMode m) { return m == SearchMode::kHetero ? "hetero" : "megatron"; }

}  // namespace hapmoe
