// A worker process: after-fork init, accept loop, per-request deadline, recycling, graceful exit.
#pragma once
#include "base/config.hpp"
#include "server/scoreboard.hpp"

namespace notesd {

/// Exit codes the master tells apart (anything else, or a signal, is an abnormal exit).
constexpr int kWorkerExitOk = 0;            // stopped by SIGTERM or recycled after max_requests
constexpr int kWorkerExitDeadline = 75;     // request_timeout_ms passed: 503 sent, slot recycled
constexpr int kWorkerExitInitFailed = 76;   // could not set up libfcgi or the application
constexpr int kWorkerExitAcceptFailed = 77; // the listening socket failed

/// Runs in the child right after fork (signals still blocked, master's self-pipe closed):
/// resets the inherited signal dispositions, serves requests, and returns the exit code.
/// seat: the worker's scoreboard cell and the shared counters (a default seat: none).
int run_worker(const Config& cfg, int listen_fd, WorkerSeat seat);

}  // namespace notesd
