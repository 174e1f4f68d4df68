#include "hapmoe/json_text.hpp"

#include <vector>

namespace hapmoe {

using nlohmann::json;

namespace {

// Well-formed UTF-8 sequences by lead byte (Unicode Standard, Table 3-7): length and the range
// of the second byte (later bytes are 0x80..0xBF). Excludes overlongs, surrogates, > U+10FFFF.
struct Utf8Lead {
  unsigned char lead_lo, lead_hi, length, second_lo, second_hi;
};
constexpr Utf8Lead kUtf8Leads[] = {{0xC2, 0xDF, 2, 0x80, 0xBF}, {0xE0, 0xE0, 3, 0xA0, 0xBF},
                                   {0xE1, 0xEC, 3, 0x80, 0xBF}, {0xED, 0xED, 3, 0x80, 0x9F},
                                   {0xEE, 0xEF, 3, 0x80, 0xBF}, {0xF0, 0xF0, 4, 0x90, 0xBF},
                                   {0xF1, 0xF3, 4, 0x80, 0xBF}, {0xF4, 0xF4, 4, 0x80, 0x8F}};

// Length of the well-formed UTF-8 sequence starting at s[i], or 0 if it is ill-formed.
std::size_t utf8_sequence_length(const std::string& s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  if (byte(i) < 0x80) return 1;
  for (const Utf8Lead& lead : kUtf8Leads) {
    if (byte(i) < lead.lead_lo || byte(i) > lead.lead_hi) continue;
    if (i + lead.length > s.size()) return 0;
    if (byte(i + 1) < lead.second_lo || byte(i + 1) > lead.second_hi) return 0;
    for (std::size_t k = 2; k < lead.length; ++k) {
      if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
    }
    return lead.length;
  }
  return 0;
}

// The nlohmann message without its "[json.exception.x.n] " prefix, cut to 200 bytes (it quotes
// the last token read, which can be a 10,000-digit number).
std::string plain_message(const char* what) {
  constexpr std::size_t kMaxBytes = 200;
  std::string m = what;
  const auto end = m.find("] ");
  if (m.rfind("[json.exception.", 0) == 0 && end != std::string::npos) m.erase(0, end + 2);
  if (m.size() > kMaxBytes) m = m.substr(0, kMaxBytes) + "...";
  return m;
}

// SAX handler: builds the document iteratively, keeps the path of the value being read and
// stops past kMaxJsonDepth before anything is allocated for the deeper levels.
class LimitedDomBuilder {
 public:
  explicit LimitedDomBuilder(const std::string& text) : text_(text) {}

  bool null() { return put(json(nullptr)); }
  bool boolean(bool v) { return put(json(v)); }
  bool number_integer(json::number_integer_t v) { return put(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return put(json(v)); }
  bool number_float(json::number_float_t v, const std::string&) { return put(json(v)); }
  bool string(std::string& v) { return put(json(std::move(v))); }
  bool binary(json::binary_t&) { return put(json(nullptr)); }  // never produced by text JSON
  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool key(std::string& k) {
    frames_.back().key = k;
    return true;
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) {
    const std::size_t bad = first_invalid_utf8(text_);
    if (bad != std::string::npos && position >= bad) {
      error_ = Error{
          "bad_utf8",
          "text is not valid UTF-8 (first ill-formed byte at offset " + std::to_string(bad) + ")",
          path()};
    } else if (ex.id == 406) {
      error_ =
          Error{"number_out_of_range",
                "number beyond the range of a double (about 1.8e308): " + plain_message(ex.what()),
                path()};
    } else {  // the whole text is malformed: field "$", the path where it stopped in the message
      const std::string at = path();
      error_ = Error{"bad_json",
                     "not valid JSON" + (at == "$" ? "" : " (in " + at + ")") + ": " +
                         plain_message(ex.what()),
                     "$"};
    }
    error_.message = to_valid_utf8(error_.message);
    return false;
  }

  json take_root() { return std::move(root_); }
  const Error& error() const { return error_; }

 private:
  struct Frame {
    json* container;
    std::string key;  // key of the value being read (objects)
  };

  // Where the next value goes: the root, the pending key of an object, or the end of an array.
  json* slot() {
    if (frames_.empty()) return &root_;
    json& c = *frames_.back().container;
    if (c.is_object()) return &c[frames_.back().key];
    c.push_back(nullptr);
    return &c.back();
  }
  bool put(json v) {
    *slot() = std::move(v);
    value_done();
    return true;
  }
  // An object's pending key is spent once its value is complete (a later error is between keys).
  void value_done() {
    if (!frames_.empty() && frames_.back().container->is_object()) frames_.back().key.clear();
  }
  bool open(json empty) {
    if (frames_.size() >= static_cast<std::size_t>(kMaxJsonDepth)) {
      error_ = Error{
          "too_deep",
          "arrays and objects nested deeper than " + std::to_string(kMaxJsonDepth) + " levels",
          path()};
      return false;
    }
    json* s = slot();
    *s = std::move(empty);
    frames_.push_back(Frame{s, ""});
    return true;
  }
  bool close() {
    frames_.pop_back();
    value_done();
    return true;
  }
  // JSON path of the value being read, in the style of the scenario errors ("a.b[2].c").
  std::string path() const {
    std::string p;
    for (const Frame& f : frames_) {
      if (f.container->is_object()) {
        if (!f.key.empty()) p += (p.empty() ? "" : ".") + to_valid_utf8(f.key);
      } else {
        const std::size_t n = f.container->size();
        p += "[" + std::to_string(n == 0 ? 0 : n - (&f == &frames_.back() ? 0 : 1)) + "]";
      }
    }
    return p.empty() ? "$" : p[0] == '[' ? "$" + p : p;
  }

  const std::string& text_;
  json root_;
  std::vector<Frame> frames_;
  Error error_{"bad_json", "not valid JSON", "$"};
};

}  // namespace

std::size_t first_invalid_utf8(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = utf8_sequence_length(text, i);
    if (len == 0) return i;
    i += len;
  }
  return std::string::npos;
}

std::string to_valid_utf8(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = utf8_sequence_length(text, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text, i, len);
      i += len;
    }
  }
  return out;
}

Expected<json> parse_json_text(const std::string& text) {
  if (text.size() > kMaxJsonTextBytes) {
    // The size itself is not quoted: the CLI stops reading one byte past the limit.
    return Error{
        "too_large",
        "JSON text longer than the limit of " + std::to_string(kMaxJsonTextBytes) + " bytes", "$"};
  }
  LimitedDomBuilder builder(text);
  if (!json::sax_parse(text, &builder)) return builder.error();
  return builder.take_root();
}

}  // namespace hapmoe
