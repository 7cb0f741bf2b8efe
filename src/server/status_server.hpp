// The master's status socket: a FastCGI responder for one URL (nginx's /notesd-status), served
// from the master's poll loop with non-blocking connections. The master is idle between its
// chores, so the page answers within a millisecond however busy the workers are, and also when
// every worker is stuck. A peer gets io_timeout_ms in all and 64 KiB for its request.
#pragma once
#include <poll.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/config.hpp"

namespace notesd {

/// The status socket's address for cfg: status_listen, or for "auto" the listen socket's
/// path with "-status" before ".sock" (none for a TCP listen); "" when there is none.
std::string status_listen_address(const Config& cfg);

/// Connections waiting in a listening socket's backlog and the backlog's size (unix: sock_diag;
/// TCP: TCP_INFO); false when the kernel does not say.
bool listen_queue(int listen_fd, long long& queued, long long& max);

class StatusServer {
public:
    /// render(query string) returns the CGI response ("Status: ...\r\n headers \r\n body").
    using Renderer = std::function<std::string(const std::string& query)>;
    StatusServer(int listen_fd, int timeout_ms, Renderer render);
    ~StatusServer();
    StatusServer(const StatusServer&) = delete;
    StatusServer& operator=(const StatusServer&) = delete;

    /// Appends the descriptors to poll (listener and connections); call after poll with them.
    void add_pollfds(std::vector<pollfd>& fds) const;
    void on_poll(const std::vector<pollfd>& fds);
    /// Milliseconds until the next connection times out; -1 when none is open.
    int next_timeout_ms() const;

private:
    struct Conn;
    void accept_new();
    void serve(Conn& c);
    int listen_fd_;
    int timeout_ms_;
    Renderer render_;
    std::vector<std::unique_ptr<Conn>> conns_;
};

}  // namespace notesd
