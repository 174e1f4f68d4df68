// JSON text at the door: the limits every scenario text must meet before anything recursive
// touches it, and a parser that turns every failure into an Error (valid UTF-8, with a field).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "hapmoe/error.hpp"

namespace hapmoe {

// Largest accepted JSON text, bytes (1 MiB: the examples are ~1-3 KB).
inline constexpr std::size_t kMaxJsonTextBytes = 1u << 20;
// Deepest accepted nesting of arrays and objects (the scenario format needs 5).
inline constexpr int kMaxJsonDepth = 64;

// Parses `text` as one JSON document. Checks, in order and without recursion: size
// (<= kMaxJsonTextBytes), well-formed UTF-8, nesting depth (<= kMaxJsonDepth), syntax and
// number range (no value beyond double range, e.g. 1e999 or a 400-digit integer).
// Errors: code "too_large" / "bad_utf8" / "too_deep" / "number_out_of_range" / "bad_json";
// field = JSON path where the parser stopped ("$" for the whole text).
Expected<nlohmann::json> parse_json_text(const std::string& text);

// Byte offset of the first ill-formed UTF-8 sequence in `text`, or npos if it is all valid.
std::size_t first_invalid_utf8(const std::string& text);

// `text` with every ill-formed UTF-8 byte replaced by U+FFFD, so messages stay valid UTF-8.
std::string to_valid_utf8(const std::string& text);

}  // namespace hapmoe
