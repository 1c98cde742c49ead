// resolver/base/find_from — find_from(): a search of a list that starts where the last match was found and goes
// round, for two lists kept in nearly the same order (a host's clusters asked in the order they were given out,
// a host's entries against its last build's): each match is most often just after the last one.
#pragma once

#include <cstddef>

namespace glbd {

// The index of the first element of `list` that `match` accepts, looking from `from` (taken modulo the size) to
// the end and then from the start; `list.size()` when none does.
template <class List, class Match>
size_t find_from(const List& list, size_t from, Match&& match) {
    const size_t n = list.size();
    for (size_t k = 0; k < n; ++k) {
        const size_t i = (from + k) % n;
        if (match(list[i])) return i;
    }
    return n;
}

}  // namespace glbd
