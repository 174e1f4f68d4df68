#include "int_arg.hpp"

namespace hapmoe_cli {

std::optional<long long> parse_int_arg(const std::string& text, long long lo, long long hi) {
  size_t i = text.size() > 0 && text[0] == '-' ? 1 : 0;
  if (i == text.size()) return std::nullopt;
  long long v = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c < '0' || c > '9') return std::nullopt;
    // Past the range already (both bounds fit in 18 digits): stop before the value can overflow.
    if (v > 100'000'000'000'000'000LL) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (text[0] == '-') v = -v;
  if (v < lo || v > hi) return std::nullopt;
  return v;
}

std::string int_arg_message(const std::string& option, long long lo, long long hi, const std::string& got) {
  const std::string shown = got.size() > 40 ? got.substr(0, 40) + "..." : got;
  return option + " needs an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got \"" +
         shown + "\"";
}

}  // namespace hapmoe_cli
