#!/usr/bin/env python3
# Where glbd's CPU went, from `perf script -F comm,ip,sym` of a call-graph recording (perf record -g) on stdin:
# the share of glbd's samples (its threads are named glbd, glbd-<role>) under each part of the work, a
# sample counting for the first part in the list below whose function is on its stack. Page faults and
# malloc are counted across the parts. Stacks walked by frame pointers need glbd built with
# CMAKE_CXX_FLAGS="-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer" (or most samples stay "not walked"), and
# stop in libc; a recording with `--call-graph dwarf` walks through libc too (larger: record a few processes).
#   perf script -i perf.data -F comm,ip,sym | python3 bench/perf-shares.py
import collections
import sys

MALLOC = ("malloc", "_int_malloc", "sysmalloc", "cfree@GLIBC_2.2.5", "_int_free", "malloc_consolidate",
          "unlink_chunk.constprop.0", "__GI___libc_malloc", "__GI___libc_free", "unlink_chunk")  # (the last: DWARF's names)
PARTS = [  # (what, functions that mark it)
    ("start-up: dynamic linking", ("_dl_relocate_object", "_dl_lookup_symbol_x", "do_lookup_x", "_dl_map_object")),
    ("start-up: reading the config", ("glbd::conf::load_file",)),
    ("snapshot builds", ("glbd::Daemon::rebuild",)),
    ("pulls: transfers read, verified, decoded, merged",
     ("glbd::sync::Pulls::on_read", "glbd::sync::Pulls::on_message", "glbd::sync::Pulls::complete")),
    ("transfers served", ("glbd::DnsServer::TcpWorker::",)),
    ("heartbeats received", ("glbd::sync::Beats::read", "glbd::sync::Beats::on_beat")),
    ("heartbeats sent", ("glbd::sync::Beats::send",)),
    ("rounds and connections", ("glbd::sync::Pulls::round", "glbd::sync::Pulls::connected", "glbd::sync::Pulls::exchange")),
    ("liveness", ("glbd::sync::Liveness::",)),
    ("UDP thread: queries, beats handed over", ("glbd::DnsServer::start()",)),
    ("start-up: the rest of main", ("main",)),
    # Where a walk stops in libc (built without frame pointers) before reaching any of the above:
    ("malloc and free, their caller not walked", MALLOC),
    ("socket calls, their caller not walked", ("__libc_sendto", "__libc_recv", "__recvmmsg", "read", "__GI___libc_write",
                                               "__libc_connect", "__libc_sendmsg", "writev")),
    ("epoll_wait: switching threads in and out", ("epoll_wait",)),
]
ACROSS = [
    ("page faults", lambda frames: any(f == "asm_exc_page_fault" for f in frames)),
    ("malloc and free (the leaf)", lambda frames: frames[0] in MALLOC),
]


def on(frame, mark):
    """Whether `frame` is the function `mark` names: a C++ name anywhere in it (lambdas, templates), a C one whole."""
    return mark in frame if "::" in mark else frame == mark


def samples(lines):
    comm, frames = None, []
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            if comm is not None:
                yield comm, frames
            comm, frames = None, []
        elif not line[0].isspace():
            comm, frames = line.split()[0], []
        else:
            parts = line.split(None, 1)
            name = parts[1] if len(parts) > 1 else "?"
            name = name.removesuffix(" (inlined)")  # DWARF's walks name inlined frames so
            frames.append(name.split("(")[0] if name.startswith("glbd::") else name.split("+")[0])
    if comm is not None:
        yield comm, frames


def main():
    total, by_part, across, threads = 0, collections.Counter(), collections.Counter(), collections.Counter()
    for comm, frames in samples(sys.stdin):
        if comm != "glbd" and not comm.startswith("glbd-"):
            continue
        total += 1
        threads[comm] += 1
        frames = frames or ["?"]
        part = next((what for what, marks in PARTS if any(on(f, m) for f in frames for m in marks)),
                    "not walked to a known part (no frame pointers, or none recorded)")
        by_part[part] += 1
        for what, test in ACROSS:
            across[what] += test(frames)
    if not total:
        print("no samples of glbd's threads")
        return 1
    print(f"glbd's CPU by part ({total} samples; by thread: " +
          ", ".join(f"{t} {100 * n / total:.0f} %" for t, n in threads.most_common()) + "):")
    for what, n in by_part.most_common():
        print(f"  {100 * n / total:5.1f} %  {what}")
    for what, n in across.items():
        print(f"  across them: {100 * n / total:.1f} % in {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
