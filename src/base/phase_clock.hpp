// The phases of one request (read, auth, parse, store, rank, render, write) and the clock that
// times them: one CLOCK_MONOTONIC read per phase change (vDSO: no system call, ~20 ns). Code of
// any layer marks the phase it enters through request_clock(); the worker starts and stops the
// clock around each request and publishes the running phase to the master's scoreboard.
#pragma once
#include <atomic>
#include <cstdint>

namespace notesd {

enum class Phase : std::uint8_t { idle, read, auth, parse, store, rank, render, write };
constexpr int kPhaseCount = 8;

/// "idle", "read", "auth", "parse", "store", "rank", "render", "write".
const char* phase_name(Phase p);

/// CLOCK_MONOTONIC in nanoseconds.
std::int64_t monotonic_ns();

class PhaseClock {
public:
    /// Starts a request in phase p (every phase's time back to 0).
    void start(Phase p);
    /// Closes the running phase and enters p; a no-op while no request runs.
    void mark(Phase p);
    /// Closes the running phase; returns the request's total time in ns.
    std::int64_t stop();
    /// Time spent in phase p by the last (or running) request, in ns.
    std::int64_t spent_ns(Phase p) const { return spent_[static_cast<int>(p)]; }
    std::int64_t started_ns() const { return started_; }
    /// Where to publish the running phase (the worker's scoreboard slot); null: nowhere.
    void publish_to(std::atomic<std::uint32_t>* phase) { published_ = phase; }

private:
    void enter(Phase p, std::int64_t now);
    std::int64_t spent_[kPhaseCount] = {};
    std::int64_t started_ = 0;
    std::int64_t last_ = 0;
    Phase current_ = Phase::idle;
    std::atomic<std::uint32_t>* published_ = nullptr;
};

/// The process's request clock: a worker serves one request at a time.
PhaseClock& request_clock();
inline void mark_phase(Phase p) { request_clock().mark(p); }

}  // namespace notesd
