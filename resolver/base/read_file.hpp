// resolver/base/read_file — the whole of a file glbd reads (its config, zone data, a kubeconfig, its stateDir
// files), bounded: never more than the caller says such a file can hold.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace glbd {

// The bytes of `path`: a regular file (a link to one is followed) of at most `max_bytes`, read with read(2)
// into one string. Otherwise nullopt, with `error` saying why without the path ("No such file or directory",
// "not a regular file", "larger than 1048576 bytes"), and `*missing` (when given) true if there is no such
// file. Any thread.
std::optional<std::string> read_file(const std::string& path, size_t max_bytes, std::string& error,
                                     bool* missing = nullptr);

}  // namespace glbd
