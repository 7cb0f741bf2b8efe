#include "server/merger_priority.hpp"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>

namespace notesd {

namespace {

// setpriority(PRIO_PROCESS, tid) sets one thread's nice value on Linux.
bool set_thread_nice(long tid, int nice) {
    return setpriority(PRIO_PROCESS, static_cast<id_t>(tid), nice) == 0;
}

long thread_id() { return syscall(SYS_gettid); }

// Whether a thread of this process can go down to `low` and back up to `own`: tried on a
// thread of its own, whose priority ends with it, so a failure changes nothing here.
bool can_return(int low, int own) {
    bool ok = false;
    std::thread probe([&] {
        const long tid = thread_id();
        ok = set_thread_nice(tid, low) && set_thread_nice(tid, own);
    });
    probe.join();
    return ok;
}

}  // namespace

int MergerPriority::current() {
    errno = 0;
    const int n = getpriority(PRIO_PROCESS, static_cast<id_t>(thread_id()));
    return errno == 0 ? n : 0;
}

MergerPriority::MergerPriority(int nice) : own_(current()) {
    low_ = std::clamp(own_ + std::max(nice, 0), own_, 19);
    usable_ = low_ > own_ && can_return(low_, own_);
    apply();
}

void MergerPriority::apply() {
    if (usable_) set_thread_nice(thread_id(), writing_ || behind_ ? own_ : low_);
}

void MergerPriority::before_write() {
    writing_ = true;
    apply();
}

void MergerPriority::after_write() {
    writing_ = false;
    apply();
}

void MergerPriority::set_behind(bool behind) {
    if (behind == behind_) return;
    behind_ = behind;
    apply();
}

}  // namespace notesd
