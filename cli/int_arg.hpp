// Integer values of command-line options (--top N, --warmup N): decimal digits only, within a
// range. "1e3", "0x10", "3abc", "+5", " 7" and values past the range are refused, never read
// as a prefix.
#pragma once

#include <optional>
#include <string>

namespace hapmoe_cli {

// The value of `text` when it is a decimal integer (digits, an optional leading '-') from lo to
// hi, else nullopt.
std::optional<long long> parse_int_arg(const std::string& text, long long lo, long long hi);

// "--top needs an integer from 1 to 100, got \"1e9\"" (the value shown as given, shortened).
std::string int_arg_message(const std::string& option, long long lo, long long hi, const std::string& got);

}  // namespace hapmoe_cli
