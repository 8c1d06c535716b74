// Result<T>: the value-or-error type every fallible function in the hub returns (LevelDB's Status
// with a payload). No exceptions cross module boundaries or the data plane; errors carry a message
// written for an operator reading the log, and a code for a caller that must tell one kind of
// failure from another (never the message's text). Header-only; used by every unit.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace yurthub {

// What kind of failure an Error is, for callers that act differently on it (absl::StatusCode's
// names, the few the hub needs).
enum class ErrorCode {
  Unknown,            // nothing more is known than the message
  InvalidArgument,    // the input is malformed or out of its bounds
  NotFound,           // what was asked for does not exist
  Busy,               // in use already (a cache directory another store holds open)
  ResourceExhausted,  // a bound was reached (the cache's map is full)
  DataLoss,           // stored data is unreadable (a corrupt cache file)
  Unavailable,        // a peer cannot be reached now; trying again later may work
  PermissionDenied,   // refused for want of a right: the peer refused the credentials (HTTP
                      // 401/403), or the process lacks a capability (CAP_NET_ADMIN)
};

struct Error {
  std::string message;
  ErrorCode code = ErrorCode::Unknown;
};

inline Error make_error(std::string message) { return Error{std::move(message)}; }
inline Error make_error(ErrorCode code, std::string message) {
  return Error{std::move(message), code};
}

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // REQUIRES: ok()
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &std::get<0>(v_); }
  const T* operator->() const { return &std::get<0>(v_); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  // REQUIRES: !ok()
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  // REQUIRES: !ok()
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

using Status = Result<void>;

}  // namespace yurthub
