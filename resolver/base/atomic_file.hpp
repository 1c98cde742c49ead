// resolver/base/atomic_file — a file in a directory of glbd's own (stateDir) replaced whole or not at all.
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include "resolver/base/result.hpp"

namespace glbd {

// Writes DIR/NAME from what `write` puts into the stream (64 KiB at a time, never the whole text in memory):
// a fresh temporary file (O_EXCL: never one that exists; O_NOFOLLOW: never through a link someone put there),
// readable by glbd's user only, synced, renamed over DIR/NAME, and the directory synced, so that a crash leaves
// the old file or the new one, whole. Makes DIR when missing. Why not, when it could not.
Status save_file(const std::string& dir, const std::string& name, const std::function<void(std::ostream&)>& write);

}  // namespace glbd
