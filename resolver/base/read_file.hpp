// resolver/base/read_file — the whole of a file glbd reads (its config, zone data, a kubeconfig, its stateDir
// files), bounded: never more than the caller says such a file can hold.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "resolver/base/result.hpp"

namespace glbd {

// The bytes of `path`: a regular file (a link to one is followed) of at most `max_bytes`, read with read(2)
// into one string. Otherwise why, without the path ("No such file or directory", "not a regular file", "larger
// than 1048576 bytes"), and `*missing` (when given) true if there is no such file. Any thread.
Result<std::string> read_file(const std::string& path, size_t max_bytes, bool* missing = nullptr);

// For a file that holds a secret (a TSIG secret, the cookie secret, a DNSSEC private key): its mode ("0644")
// when every user may read or write it, which glbd refuses; nothing when it is private enough, or cannot be
// stat'ed (the caller's read says why). A link is followed. Any thread.
std::optional<std::string> open_to_everyone(const std::string& path);

}  // namespace glbd
