// The master's listening sockets: the API socket (from systemd's fd 3, a unix path or a TCP
// address) and the status page's socket (fd 4, status_listen), opened before the workers fork.
#pragma once
#include <optional>
#include <string>

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

struct Listener {
    int fd = -1;
    bool from_systemd = false;
    std::string created_path;  // unix socket we bound and must remove at exit
    // The master's status socket (-1: none), and its path when we created it.
    int status_fd = -1;
    std::string status_address;
    std::string status_created_path;
};

/// Opens both sockets (the API one non-blocking); throws std::runtime_error naming the problem.
Listener open_listener(const Config& c);

}  // namespace notesd
