// result<T>: the value-or-error type used at every component boundary.
//
// A function that can fail returns result<T>. The error side is tether::error:
// a std::error_code (each layer registers its own category in its errors.h)
// plus a human-readable message for the log and the API. Exceptions are kept
// for bugs (TETHER_CHECK) and converted to errors at the edge, once.
//
//   result<input> r = co_await admit(...);
//   if (!r) return r.error();          // propagate
//   use(r.value());
#pragma once

#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>

#include "util/check.h"
#include "util/errors.h"

namespace tether {

struct error {
  std::error_code code;
  std::string message;

  error() = default;
  error(std::error_code c, std::string m = {}) : code(c), message(std::move(m)) {}
  template <class E>
    requires std::is_error_code_enum_v<E>
  error(E e, std::string m = {}) : code(make_error_code(e)), message(std::move(m)) {}

  // "category: message" or the code's own text when no message was given.
  [[nodiscard]] std::string describe() const;
  friend bool operator==(const error& e, std::error_code c) { return e.code == c; }
  template <class E>
    requires std::is_error_code_enum_v<E>
  friend bool operator==(const error& e, E c) { return e.code == make_error_code(c); }
};

template <class T>
class [[nodiscard]] result {
 public:
  using value_type = T;
  // Holds an error: asio's completion machinery (co_spawn, channels) needs
  // default-constructible values; a real result always replaces it.
  result() : v_(std::in_place_index<1>, tether::error(util_errc::invalid_argument, "no result")) {}
  result(T v) : v_(std::in_place_index<0>, std::move(v)) {}            // NOLINT
  result(tether::error e) : v_(std::in_place_index<1>, std::move(e)) {}        // NOLINT
  template <class E>
    requires std::is_error_code_enum_v<E>
  result(E e) : v_(std::in_place_index<1>, tether::error(e)) {}                // NOLINT

  [[nodiscard]] bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { TETHER_CHECK(has_value(), "value() on error: " + std::get<1>(v_).describe()); return std::get<0>(v_); }
  const T& value() const& { TETHER_CHECK(has_value(), "value() on error: " + std::get<1>(v_).describe()); return std::get<0>(v_); }
  T&& value() && { TETHER_CHECK(has_value(), "value() on error: " + std::get<1>(v_).describe()); return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  [[nodiscard]] const tether::error& error() const { TETHER_CHECK(!has_value(), "error() on value"); return std::get<1>(v_); }

 private:
  std::variant<T, tether::error> v_;
};

template <>
class [[nodiscard]] result<void> {
 public:
  result() = default;
  result(tether::error e) : err_(std::move(e)), failed_(true) {}               // NOLINT
  template <class E>
    requires std::is_error_code_enum_v<E>
  result(E e) : err_(e), failed_(true) {}                              // NOLINT
  [[nodiscard]] bool has_value() const { return !failed_; }
  explicit operator bool() const { return !failed_; }
  void value() const { TETHER_CHECK(!failed_, "value() on error: " + err_.describe()); }
  [[nodiscard]] const tether::error& error() const { TETHER_CHECK(failed_, "error() on value"); return err_; }

 private:
  tether::error err_;
  bool failed_ = false;
};

inline result<void> ok() { return {}; }

// Builds an error from a code enum and a message.
template <class E>
  requires std::is_error_code_enum_v<E>
tether::error make_error(E e, std::string message) { return {e, std::move(message)}; }

}  // namespace tether

// Propagates the error of a result-returning expression from a function that
// returns result<...>; otherwise yields nothing.
#define TETHER_TRY(expr)                                  \
  do {                                                    \
    if (auto tether_try_r_ = (expr); !tether_try_r_)      \
      return tether_try_r_.error();                       \
  } while (0)
#define TETHER_CO_TRY(expr)                               \
  do {                                                    \
    if (auto tether_try_r_ = (expr); !tether_try_r_)      \
      co_return tether_try_r_.error();                    \
  } while (0)
