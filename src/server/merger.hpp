// The background merger (issue 19): a child process of the master, supervised like a worker
// (restarted with back-off when it dies, replaced on reload, stopped with the pool), that keeps
// every user's search index as the merge policy (index/merge_policy.hpp) wants it: it folds the
// postings rows API writes leave into segments and merges segments, one bounded step at a time
// (store/segments.hpp), so no request waits on a merge for more than one short transaction.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>

#include "base/config.hpp"
#include "index/merge_policy.hpp"

namespace notesd {

/// The merger's policy under this configuration.
MergePolicy merger_policy(const Config& cfg);

/// The merger child's main loop: a pass over every user each merge_interval_ms, until SIGTERM.
/// A merge killed at any point (SIGTERM ends it at once, as SIGKILL would) leaves the index
/// exact; the next merger removes what the step left.
[[noreturn]] void run_merger(const Config& cfg);

/// The master's side: at most one merger child, started when merge_interval_ms > 0 and
/// restarted with back-off (up to respawn_backoff_max_ms) when it dies.
class MergerChild {
public:
    using Clock = std::chrono::steady_clock;
    /// Forks the merger when the configuration wants one and its restart is due; the child
    /// closes close_fd (the master's signal pipe) first. All signals are blocked across fork.
    void start_if_due(const Config& cfg, const int close_fd[2]);
    /// Whether pid was the merger; then it is logged and, unless stopping, restarted later.
    bool on_exit(pid_t pid, const std::string& status, bool clean, bool stopping, int backoff_max_ms);
    pid_t pid() const { return pid_; }
    /// Forgets the running merger (reload retires it like an old worker); returns its pid.
    pid_t release();
    /// When start_if_due has something to do next; none while one runs or none is wanted.
    std::optional<Clock::time_point> next_start(const Config& cfg) const;

private:
    pid_t pid_ = 0;
    Clock::time_point started_{}, start_at_{};
    int backoff_ms_ = 0;
};

}  // namespace notesd
