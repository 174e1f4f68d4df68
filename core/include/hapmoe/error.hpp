// Error values for user input: {code, message, field}. Parsing and validation return these
// instead of throwing, so bad input never escapes the core as an exception.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace hapmoe {

struct Error {
  std::string code;     // machine-readable, e.g. "out_of_range", "unknown_field", "rule:batch_divisible"
  std::string message;  // says what was expected
  std::string field;    // JSON path of the offending value, e.g. "cluster.groups[1].nodes"
};

// A value or an Error. Minimal std::expected stand-in for C++17.
template <class T>
class Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Expected(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  const T& value() const& { return std::get<0>(v_); }
  T& value() & { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  const T& operator*() const { return value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace hapmoe
