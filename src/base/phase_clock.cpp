#include "base/phase_clock.hpp"

#include <time.h>

namespace notesd {

const char* phase_name(Phase p) {
    switch (p) {
    case Phase::idle: return "idle";
    case Phase::read: return "read";
    case Phase::auth: return "auth";
    case Phase::parse: return "parse";
    case Phase::store: return "store";
    case Phase::rank: return "rank";
    case Phase::render: return "render";
    case Phase::write: return "write";
    }
    return "unknown";
}

std::int64_t monotonic_ns() {
    struct timespec ts {};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

void PhaseClock::enter(Phase p, std::int64_t now) {
    current_ = p;
    last_ = now;
    // Relaxed: the master only reads it for the status page and its kill log line.
    if (published_) published_->store(static_cast<std::uint32_t>(p), std::memory_order_relaxed);
}

void PhaseClock::start(Phase p) {
    for (auto& s : spent_) s = 0;
    started_ = monotonic_ns();
    enter(p, started_);
}

void PhaseClock::mark(Phase p) {
    if (current_ == Phase::idle || p == current_) return;
    const std::int64_t now = monotonic_ns();
    spent_[static_cast<int>(current_)] += now - last_;
    enter(p, now);
}

std::int64_t PhaseClock::stop() {
    if (current_ == Phase::idle) return last_ - started_;
    const std::int64_t now = monotonic_ns();
    spent_[static_cast<int>(current_)] += now - last_;
    enter(Phase::idle, now);
    return now - started_;
}

PhaseClock& request_clock() {
    static PhaseClock clock;
    return clock;
}

}  // namespace notesd
