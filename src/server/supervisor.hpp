// The master process: listening socket, fork, reap, respawn with back-off, stop/reload ladder.
// It never serves requests, never calls FCGX_Init and never opens the database.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/config.hpp"
#include "server/listener.hpp"

namespace notesd {

/// Re-reads the configuration for SIGHUP (the file plus command-line overrides); fills
/// `problems` (empty when the new configuration is valid).
using ConfigReloader = std::function<Config(std::vector<std::string>& problems)>;

/// Runs the master until SIGTERM/SIGINT; returns the process exit code (0 after a clean stop,
/// 1 when the socket or pid file cannot be set up).
int run_supervisor(const Config& cfg, const ConfigReloader& reload);

}  // namespace notesd
