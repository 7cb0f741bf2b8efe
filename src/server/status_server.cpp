#include "server/status_server.hpp"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/log.hpp"
#include "server/fcgi_records.hpp"
#include "server/listener.hpp"

namespace notesd {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kMaxConnections = 16;  // nginx asks one page at a time; more wait in the backlog

bool unix_listen_queue(int fd, long long& queued, long long& max) {
    struct stat st {};
    if (fstat(fd, &st) != 0) return false;
    const int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (nl < 0) return false;
    struct {
        nlmsghdr nlh;
        unix_diag_req req;
    } msg {};
    msg.nlh.nlmsg_len = sizeof msg;
    msg.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    msg.nlh.nlmsg_flags = NLM_F_REQUEST;
    msg.req.sdiag_family = AF_UNIX;
    msg.req.udiag_states = ~0u;
    msg.req.udiag_ino = static_cast<__u32>(st.st_ino);
    msg.req.udiag_show = UDIAG_SHOW_RQLEN;
    msg.req.udiag_cookie[0] = msg.req.udiag_cookie[1] = ~0u;  // no cookie check
    bool found = false;
    struct timeval tv {0, 100000};
    setsockopt(nl, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (send(nl, &msg, sizeof msg, 0) == static_cast<ssize_t>(sizeof msg)) {
        alignas(nlmsghdr) char buf[8192];
        const ssize_t n = recv(nl, buf, sizeof buf, 0);
        auto* h = reinterpret_cast<nlmsghdr*>(buf);
        if (n > 0 && NLMSG_OK(h, static_cast<unsigned>(n)) && h->nlmsg_type == SOCK_DIAG_BY_FAMILY) {
            auto* m = static_cast<unix_diag_msg*>(NLMSG_DATA(h));
            int len = static_cast<int>(h->nlmsg_len - NLMSG_LENGTH(sizeof *m));
            for (auto* a = reinterpret_cast<rtattr*>(m + 1); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
                if (a->rta_type == UNIX_DIAG_RQLEN) {
                    auto* q = static_cast<unix_diag_rqlen*>(RTA_DATA(a));
                    queued = q->udiag_rqueue;  // a listener: connections not yet accepted
                    max = q->udiag_wqueue;     // a listener: its backlog
                    found = true;
                }
            }
        }
    }
    close(nl);
    return found;
}

}  // namespace

std::string status_listen_address(const Config& cfg) {
    if (cfg.status_listen == "off") return {};
    if (cfg.status_listen != "auto") return cfg.status_listen;
    std::string error;
    const auto a = parse_listen_address(cfg.listen, error);
    if (!a || !a->is_unix) return {};
    const std::string& p = a->path;
    const std::string ext = ".sock";
    if (p.size() > ext.size() && p.compare(p.size() - ext.size(), ext.size(), ext) == 0)
        return p.substr(0, p.size() - ext.size()) + "-status.sock";
    return p + "-status";
}

bool listen_queue(int fd, long long& queued, long long& max) {
    sockaddr_storage sa {};
    socklen_t len = sizeof sa;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) return false;
    if (sa.ss_family == AF_UNIX) return unix_listen_queue(fd, queued, max);
    tcp_info ti {};
    socklen_t tl = sizeof ti;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) != 0) return false;
    queued = ti.tcpi_unacked;  // a listener: the accept queue's length
    max = ti.tcpi_sacked;      // a listener: its backlog
    return true;
}

struct StatusServer::Conn {
    int fd = -1;
    Clock::time_point deadline;
    FcgiRequestReader reader;
    std::string out;
    std::size_t sent = 0;
    bool done = false;
};

StatusServer::StatusServer(int listen_fd, int timeout_ms, Renderer render)
    : listen_fd_(listen_fd), timeout_ms_(timeout_ms), render_(std::move(render)) {}

StatusServer::~StatusServer() {
    for (auto& c : conns_) close(c->fd);
}

void StatusServer::add_pollfds(std::vector<pollfd>& fds) const {
    if (conns_.size() < kMaxConnections) fds.push_back(pollfd{listen_fd_, POLLIN, 0});
    for (const auto& c : conns_)
        fds.push_back(pollfd{c->fd, static_cast<short>(c->out.empty() ? POLLIN : POLLOUT), 0});
}

int StatusServer::next_timeout_ms() const {
    if (conns_.empty()) return -1;
    auto next = conns_.front()->deadline;
    for (const auto& c : conns_) next = std::min(next, c->deadline);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now()).count() + 1;
    return static_cast<int>(std::max<long long>(ms, 0));
}

void StatusServer::accept_new() {
    while (conns_.size() < kMaxConnections) {
        const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;  // EAGAIN: none left (other errors: the next poll tries again)
        auto c = std::make_unique<Conn>();
        c->fd = fd;
        c->deadline = Clock::now() + std::chrono::milliseconds(timeout_ms_);
        conns_.push_back(std::move(c));
    }
}

void StatusServer::serve(Conn& c) {
    if (c.out.empty()) {
        char buf[4096];
        for (;;) {
            const ssize_t n = read(c.fd, buf, sizeof buf);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                c.done = true;
                return;
            }
            if (n < 0) return;  // wait for more
            const auto st = c.reader.feed(buf, static_cast<std::size_t>(n));
            if (st == FcgiRequestReader::State::bad) {
                c.done = true;
                return;
            }
            if (st == FcgiRequestReader::State::done) break;
        }
        std::string cgi;
        try {
            cgi = render_(c.reader.param("QUERY_STRING"));
        } catch (const std::exception& e) {
            log_error("status page failed", {{"error", e.what()}});
            cgi = "Status: 500 Internal Server Error\r\nContent-Type: text/plain\r\n\r\nstatus page failed\n";
        }
        c.out = encode_fastcgi_records(c.reader.request_id(), cgi);
    }
    while (c.sent < c.out.size()) {
        const ssize_t n = send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno != EAGAIN && errno != EINTR) c.done = true;
            return;
        }
        c.sent += static_cast<std::size_t>(n);
    }
    c.done = true;
}

void StatusServer::on_poll(const std::vector<pollfd>& fds) {
    for (const pollfd& p : fds) {
        if (p.revents == 0) continue;
        if (p.fd == listen_fd_) {
            accept_new();
            continue;
        }
        for (auto& c : conns_)
            if (c->fd == p.fd && !c->done) serve(*c);
    }
    const auto now = Clock::now();
    for (auto it = conns_.begin(); it != conns_.end();) {
        if ((*it)->done || now >= (*it)->deadline) {
            close((*it)->fd);
            it = conns_.erase(it);
        } else {
            ++it;
        }
    }
}

}  // namespace notesd
