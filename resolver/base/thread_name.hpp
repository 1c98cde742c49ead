// resolver/base/thread_name — what a thread is called in `top -H`, `ps -L`, perf and gdb.
#pragma once

#include <pthread.h>

namespace glbd {

// Names the calling thread as `top -H`, `ps -L` and perf show it ("glbd-sync"); at most 15 characters,
// and a name the kernel refuses changes nothing else.
inline void name_this_thread(const char* name) { pthread_setname_np(pthread_self(), name); }

}  // namespace glbd
