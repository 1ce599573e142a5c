#pragma once

#include <string>
#include <utility>
#include <variant>

namespace mdadmit::rules {

// An error that crossed a boundary of the core: what failed and where (file, field).
struct Error {
    std::string message;
};

// The core's one way to report a failure to its caller: a value or an Error, never an
// exception (GCC 12 has no std::expected).
template <typename T>
class Result {
  public:
    Result(T value) : state_(std::move(value)) {}
    Result(Error error) : state_(std::move(error)) {}

    bool ok() const { return std::holds_alternative<T>(state_); }
    explicit operator bool() const { return ok(); }

    T& value() & { return std::get<T>(state_); }
    const T& value() const& { return std::get<T>(state_); }
    T&& value() && { return std::get<T>(std::move(state_)); }
    const Error& error() const { return std::get<Error>(state_); }

  private:
    std::variant<T, Error> state_;
};

}  // namespace mdadmit::rules
