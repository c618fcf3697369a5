#pragma once
// Expected-style results used across every module boundary in core.
// An Error carries a code (which maps to the CLI's documented exit codes) and a message that
// names the field, file or rank at fault and says what to do.
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace wb {

enum class Errc {
  InvalidConfig,   // exit 2
  Data,            // exit 3
  Diverged,        // exit 4
  Cancelled,       // exit 130
  Io,
  Model,
  Checkpoint,
  Distributed,
  Internal,
};

struct Error {
  Errc code = Errc::Internal;
  std::string message;
};

// Documented process exit codes: 0 ok, 2 bad config, 3 data error, 4 diverged, 130 cancelled,
// 1 anything else.
int exitCodeFor(Errc code);
const char* errcName(Errc code);

inline Error makeError(Errc code, std::string message) { return Error{code, std::move(message)}; }

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}          // NOLINT(implicit)
  Result(Error error) : v_(std::move(error)) {}      // NOLINT(implicit)
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &std::get<0>(v_); }
  const T* operator->() const { return &std::get<0>(v_); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : e_(std::move(error)) {}      // NOLINT(implicit)
  bool ok() const { return !e_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return *e_; }

 private:
  std::optional<Error> e_;
};

using Status = Result<void>;

}  // namespace wb
