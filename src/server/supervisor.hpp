// The master process: listening socket, fork, reap, respawn with back-off, stop/reload ladder.
// It never serves requests, never calls FCGX_Init and never opens the database.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/config.hpp"

namespace notesd {

/// A parsed `listen` value: a unix socket path, or a TCP host (empty = all) and port.
struct ListenAddress {
    bool is_unix = false;
    std::string path;
    std::string host;
    std::string port;
};

/// Parses "/path", "unix:/path", "host:port", "[v6]:port", ":port" or "port"; nullopt + error.
std::optional<ListenAddress> parse_listen_address(const std::string& spec, std::string& error);

/// Re-reads the configuration for SIGHUP (the file plus command-line overrides); fills
/// `problems` (empty when the new configuration is valid).
using ConfigReloader = std::function<Config(std::vector<std::string>& problems)>;

/// Runs the master until SIGTERM/SIGINT; returns the process exit code (0 after a clean stop,
/// 1 when the socket or pid file cannot be set up).
int run_supervisor(const Config& cfg, const ConfigReloader& reload);

}  // namespace notesd
