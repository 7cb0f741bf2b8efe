#include "server/listener.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "server/status_server.hpp"

namespace notesd {

namespace {

[[noreturn]] void fail(const std::string& what, int e) {
    throw std::runtime_error(what + ": " + std::strerror(e));
}

// systemd socket activation (sd_listen_fds without libsystemd): fd 3 when LISTEN_PID is us,
// and fd 4 for the status page when the socket unit passes a second socket.
int systemd_listen_fds() {
    const char* pid = std::getenv("LISTEN_PID");
    const char* fds = std::getenv("LISTEN_FDS");
    if (!pid || !fds) return 0;
    if (std::strtol(pid, nullptr, 10) != static_cast<long>(getpid())) return 0;
    const long n = std::strtol(fds, nullptr, 10);
    if (n < 1) return 0;
    // Workers are forks, not execs, but keep the environment honest for anything we spawn.
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
    return static_cast<int>(n);
}

// The fd of a socket systemd passed after checking that it is a listening socket.
int check_systemd_fd(int fd) {
    int accepting = 0;
    socklen_t len = sizeof accepting;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) != 0 || !accepting)
        throw std::runtime_error("LISTEN_FDS is set but fd " + std::to_string(fd) +
                                 " is not a listening socket");
    return fd;
}

// An existing socket file is removed only when nobody answers on it (a stale leftover);
// a live one means another instance is running.
void remove_stale_socket(const std::string& path) {
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) return;
    if (!S_ISSOCK(st.st_mode)) throw std::runtime_error(path + " exists and is not a socket");
    const int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa {};
    sa.sun_family = AF_UNIX;
    std::strncpy(sa.sun_path, path.c_str(), sizeof sa.sun_path - 1);
    const bool live = probe >= 0 && connect(probe, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
    if (probe >= 0) close(probe);
    if (live) throw std::runtime_error(path + " is in use by another running server");
    if (unlink(path.c_str()) != 0) fail("cannot remove stale socket " + path, errno);
}

int open_unix(const std::string& path, int mode, int backlog) {
    remove_stale_socket(path);
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) fail("socket", errno);
    struct sockaddr_un sa {};
    sa.sun_family = AF_UNIX;
    std::strncpy(sa.sun_path, path.c_str(), sizeof sa.sun_path - 1);
    const mode_t old = umask(0177);  // never world-accessible, even for a moment
    const int rc = bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    const int e = errno;
    umask(old);
    if (rc != 0) {
        close(fd);
        fail("cannot bind " + path, e);
    }
    if (chmod(path.c_str(), static_cast<mode_t>(mode)) != 0 || listen(fd, backlog) != 0) {
        const int e2 = errno;
        close(fd);
        unlink(path.c_str());
        fail("cannot listen on " + path, e2);
    }
    return fd;
}

int open_tcp(const ListenAddress& a, int backlog) {
    struct addrinfo hints {};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    struct addrinfo* res = nullptr;
    const int gai = getaddrinfo(a.host.empty() ? nullptr : a.host.c_str(), a.port.c_str(), &hints, &res);
    if (gai != 0) throw std::runtime_error("cannot resolve " + a.host + ": " + gai_strerror(gai));
    int err = 0;
    int fd = -1;
    for (auto* ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        const int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, backlog) != 0) {
            err = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) fail("cannot listen on " + a.host + ":" + a.port, err);
    return fd;
}

// The status socket: from systemd (fd 4), or opened here like the API socket.
void open_status_listener(const Config& c, Listener& l, int systemd_fds) {
    if (systemd_fds >= 2) {
        l.status_fd = check_systemd_fd(4);
        l.status_address = "systemd:fd4";
    } else {
        l.status_address = status_listen_address(c);
        if (l.status_address.empty()) return;
        std::string error;
        const auto a = parse_listen_address(l.status_address, error);
        if (!a) throw std::runtime_error("status_listen: " + error);
        if (a->is_unix) {
            l.status_fd = open_unix(a->path, c.listen_mode, 64);
            l.status_created_path = a->path;
        } else {
            l.status_fd = open_tcp(*a, 64);
        }
    }
    fcntl(l.status_fd, F_SETFL, fcntl(l.status_fd, F_GETFL) | O_NONBLOCK);
    // Workers never touch it.
    fcntl(l.status_fd, F_SETFD, FD_CLOEXEC);
}

}  // namespace

Listener open_listener(const Config& c) {
    Listener l;
    const int systemd_fds = systemd_listen_fds();
    if (systemd_fds >= 1) {
        l.fd = check_systemd_fd(3);
        l.from_systemd = true;
    } else {
        std::string error;
        const auto a = parse_listen_address(c.listen, error);
        if (!a) throw std::runtime_error("listen: " + error);
        if (a->is_unix) {
            l.fd = open_unix(a->path, c.listen_mode, c.listen_backlog);
            l.created_path = a->path;
        } else {
            l.fd = open_tcp(*a, c.listen_backlog);
        }
    }
    // Workers poll() and then accept(); a non-blocking socket turns a lost race into EAGAIN
    // instead of a worker stuck in accept() where a stop signal cannot reach it cleanly.
    const int flags = fcntl(l.fd, F_GETFL);
    fcntl(l.fd, F_SETFL, flags | O_NONBLOCK);
    try {
        open_status_listener(c, l, systemd_fds);
    } catch (...) {
        if (!l.created_path.empty()) unlink(l.created_path.c_str());
        throw;
    }
    return l;
}

std::optional<ListenAddress> parse_listen_address(const std::string& spec, std::string& error) {
    ListenAddress a;
    if (spec.rfind("unix:", 0) == 0 || spec.find('/') != std::string::npos) {
        a.is_unix = true;
        a.path = spec.rfind("unix:", 0) == 0 ? spec.substr(5) : spec;
        if (a.path.empty()) {
            error = "empty unix socket path";
            return std::nullopt;
        }
        if (a.path.size() >= sizeof(sockaddr_un{}.sun_path)) {
            error = "unix socket path longer than 107 bytes";
            return std::nullopt;
        }
        return a;
    }
    if (!spec.empty() && spec[0] == '[') {
        const auto close = spec.find("]:");
        if (close == std::string::npos) {
            error = "expected [address]:port";
            return std::nullopt;
        }
        a.host = spec.substr(1, close - 1);
        a.port = spec.substr(close + 2);
    } else {
        const auto colon = spec.rfind(':');
        if (colon == std::string::npos) {
            a.port = spec;
        } else {
            a.host = spec.substr(0, colon);
            a.port = spec.substr(colon + 1);
        }
        if (a.host.find(':') != std::string::npos) {
            error = "write IPv6 addresses as [address]:port";
            return std::nullopt;
        }
    }
    const bool digits = !a.port.empty() && a.port.size() <= 5 &&
                        a.port.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoi(a.port) < 1 || std::stoi(a.port) > 65535) {
        error = "'" + spec + "' is not a unix socket path, host:port or :port (port 1-65535)";
        return std::nullopt;
    }
    return a;
}

}  // namespace notesd
