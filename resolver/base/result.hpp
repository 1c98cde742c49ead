// resolver/base/result — the one way a non-query layer says "this, or why not" (conf, sync, server/app's own
// clients): a value, or an error message for a log line or a user. The query path does not use it (it answers
// with an rcode and counts); constructors and config loading throw (docs: each layer's README says which).
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace glbd {

// Why something failed: a message for a person ("no answer in 2000 ms").
struct Err {
    std::string why;
};

template <class T>
class Result {
public:
    Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor): `return value;`
    Result(Err e) : v_(std::move(e)) {}        // NOLINT(google-explicit-constructor): `return Err{"..."};`
    [[nodiscard]] bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }
    T& operator*() { return std::get<0>(v_); }
    const T& operator*() const { return std::get<0>(v_); }
    T* operator->() { return &std::get<0>(v_); }
    const T* operator->() const { return &std::get<0>(v_); }
    // The error's message; "" when there is a value.
    [[nodiscard]] const std::string& error() const {
        static const std::string kNone;
        return ok() ? kNone : std::get<1>(v_).why;
    }

private:
    std::variant<T, Err> v_;
};

// Success, or why not, for what returns nothing.
using Status = Result<std::monostate>;
inline Status ok() { return std::monostate{}; }

}  // namespace glbd
