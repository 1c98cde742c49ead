// resolver/base/read_file — the whole of a file glbd reads (its config, zone data, a kubeconfig, its stateDir
// files), bounded: never more than the caller says such a file can hold.
#pragma once

#include <cstddef>
#include <string>

#include "resolver/base/result.hpp"

namespace glbd {

// The bytes of `path`: a regular file (a link to one is followed) of at most `max_bytes`, read with read(2)
// into one string. Otherwise why, without the path ("No such file or directory", "not a regular file", "larger
// than 1048576 bytes"), and `*missing` (when given) true if there is no such file. Any thread.
Result<std::string> read_file(const std::string& path, size_t max_bytes, bool* missing = nullptr);

}  // namespace glbd
