// json_text.hpp: the door limits (size, depth, UTF-8, number range) and the JSON path of the
// value where parsing stopped.
#include "hapmoe/json_text.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace {

using hapmoe::parse_json_text;

std::string nested_arrays(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

bool is_valid_utf8(const std::string& s) {
  return hapmoe::first_invalid_utf8(s) == std::string::npos;
}

}  // namespace

TEST_CASE("parse_json_text accepts ordinary documents up to the depth limit") {
  const auto doc =
      parse_json_text(R"({"a": [1, 2.5, "x", null, true, {"b": -3}], "c": 18446744073709551615})");
  REQUIRE(doc.ok());
  CHECK((*doc)["a"][5]["b"] == -3);
  CHECK((*doc)["a"][1] == 2.5);
  CHECK((*doc)["c"].get<unsigned long long>() == 18446744073709551615ULL);
  CHECK(parse_json_text(nested_arrays(hapmoe::kMaxJsonDepth)).ok());
  CHECK(parse_json_text("\xEF\xBB\xBF{\"k\": \"\xC3\xA9\xF0\x9F\x98\x80\"}")
            .ok());  // BOM, 2- and 4-byte
}

TEST_CASE("parse_json_text rejects nesting past the limit without recursion") {
  const auto over = parse_json_text(nested_arrays(hapmoe::kMaxJsonDepth + 1));
  REQUIRE_FALSE(over.ok());
  CHECK(over.error().code == "too_deep");
  const auto deep = parse_json_text(R"({"model": {"x": )" + nested_arrays(200000) + "}}");
  REQUIRE_FALSE(deep.ok());
  CHECK(deep.error().code == "too_deep");
  const auto mid = parse_json_text(R"({"model": {"x": )" + nested_arrays(5000) + "}}");
  REQUIRE_FALSE(mid.ok());
  CHECK(mid.error().code == "too_deep");
  CHECK(mid.error().field.rfind("model.x[0]", 0) == 0);
}

TEST_CASE("parse_json_text rejects text over the size limit before parsing") {
  const std::string big = "[" + std::string(hapmoe::kMaxJsonTextBytes, ' ') + "]";
  const auto r = parse_json_text(big);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == "too_large");
  CHECK(r.error().field == "$");
}

TEST_CASE("numbers beyond double range name the field") {
  for (const std::string& num : std::vector<std::string>{"1e999", "-1e999", std::string(10000, '9'),
                                                         "1" + std::string(400, '0')}) {
    const auto r =
        parse_json_text(R"({"cluster": {"groups": [{"nodes": 1}, {"nodes": )" + num + "}]}}");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "number_out_of_range");
    CHECK(r.error().field == "cluster.groups[1].nodes");
    CHECK(is_valid_utf8(r.error().message));
    CHECK(r.error().message.size() < 400);
  }
  CHECK(parse_json_text("[1e308, 5e-324, 1e-999]")
            .ok());  // underflow is 0 or subnormal, not an error
}

TEST_CASE("invalid UTF-8 gives a bad_utf8 error whose message is valid UTF-8") {
  for (const std::string& bad : std::vector<std::string>{"\xFF", "\xC3", "\xC0\xAF", "\xED\xA0\x80",
                                                         "\xF4\x90\x80\x80", "\xE2\x82"}) {
    const auto r = parse_json_text("{\"model\": {\"name\": \"a" + bad + "b\"}}");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "bad_utf8");
    CHECK(r.error().field == "model.name");
    CHECK(is_valid_utf8(r.error().message));
    CHECK(is_valid_utf8(hapmoe::to_valid_utf8("x" + bad)));
  }
  const auto in_key = parse_json_text("{\"model\": {\"a\": 1, \"k\xFF\": 2}}");
  REQUIRE_FALSE(in_key.ok());
  CHECK(in_key.error().field == "model");
  const auto outside = parse_json_text("{\"a\": 1, \xFF}");
  REQUIRE_FALSE(outside.ok());
  CHECK(outside.error().code == "bad_utf8");
  CHECK(is_valid_utf8(outside.error().message));
}

TEST_CASE("syntax errors are bad_json with the path where parsing stopped") {
  const auto r = parse_json_text(R"({"training": {"global_batch_size": tru}})");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == "bad_json");
  CHECK(r.error().field == "$");
  CHECK(r.error().message.find("(in training.global_batch_size)") != std::string::npos);
  CHECK(r.error().message.find("[json.exception") == std::string::npos);
  CHECK_FALSE(parse_json_text("").ok());
  CHECK_FALSE(parse_json_text("{} {}").ok());
  CHECK_FALSE(parse_json_text(R"(["\ud800"])").ok());  // lone surrogate escape
  CHECK(parse_json_text(R"([[1, 2], [3, x]])").error().message.find("(in $[1][1])") !=
        std::string::npos);
  CHECK(parse_json_text(std::string(10000, '9') + "x").error().message.size() < 400);
}

TEST_CASE("to_valid_utf8 keeps valid text and replaces each bad byte") {
  CHECK(hapmoe::to_valid_utf8("caf\xC3\xA9") == "caf\xC3\xA9");
  CHECK(hapmoe::to_valid_utf8("a\xFF\xFE") == "a\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(hapmoe::first_invalid_utf8("ab\xFF") == 2);
}

TEST_CASE("first_invalid_utf8 accepts every scalar value and rejects surrogates and overlongs") {
  const auto encode = [](unsigned cp) {
    std::string s;
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else if (cp < 0x800) {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      s += static_cast<char>(0xE0 | (cp >> 12));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      s += static_cast<char>(0xF0 | (cp >> 18));
      s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return s;
  };
  long bad_scalars = 0, good_surrogates = 0;
  for (unsigned cp = 0; cp <= 0x10FFFF; ++cp) {
    const bool surrogate = cp >= 0xD800 && cp <= 0xDFFF;
    const bool valid = hapmoe::first_invalid_utf8(encode(cp)) == std::string::npos;
    if (surrogate && valid) ++good_surrogates;
    if (!surrogate && !valid) ++bad_scalars;
  }
  CHECK(bad_scalars == 0);
  CHECK(good_surrogates == 0);
  CHECK(hapmoe::first_invalid_utf8("\xC1\xBF") == 0);          // overlong U+007F
  CHECK(hapmoe::first_invalid_utf8("\xE0\x9F\xBF") == 0);      // overlong U+07FF
  CHECK(hapmoe::first_invalid_utf8("\xF0\x8F\xBF\xBF") == 0);  // overlong U+FFFF
  CHECK(hapmoe::first_invalid_utf8("\xF4\x90\x80\x80") == 0);  // U+110000
  CHECK(hapmoe::first_invalid_utf8("ok\xF0\x9F\x98") == 2);    // truncated 4-byte sequence
}
