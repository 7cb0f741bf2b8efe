#include "server/supervisor.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <stdexcept>

#include "base/log.hpp"
#include "server/worker.hpp"

// libgcov's profile writer: present only in `make pgo`'s instrumented build (weak: null
// otherwise). Called the same way in every build, so the profile matches the code it guides.
extern "C" void __gcov_dump(void) __attribute__((weak));

namespace notesd {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The self-pipe: signal handlers only write the signal number; the main loop does the work.
int g_pipe[2] = {-1, -1};

extern "C" void on_master_signal(int sig) {
    const int saved = errno;
    const unsigned char b = static_cast<unsigned char>(sig);
    (void)!::write(g_pipe[1], &b, 1);  // a full pipe already guarantees a wake-up
    errno = saved;
}

std::string errno_text(int e) { return std::strerror(e); }

[[noreturn]] void fail(const std::string& what, int e) {
    throw std::runtime_error(what + ": " + errno_text(e));
}

struct Listener {
    int fd = -1;
    bool from_systemd = false;
    std::string created_path;  // unix socket we bound and must remove at exit
};

// systemd socket activation (sd_listen_fds without libsystemd): fd 3 when LISTEN_PID is us.
int systemd_listen_fd() {
    const char* pid = std::getenv("LISTEN_PID");
    const char* fds = std::getenv("LISTEN_FDS");
    if (!pid || !fds) return -1;
    if (std::strtol(pid, nullptr, 10) != static_cast<long>(getpid())) return -1;
    if (std::strtol(fds, nullptr, 10) < 1) return -1;
    // Workers are forks, not execs, but keep the environment honest for anything we spawn.
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
    return 3;
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

Listener open_listener(const Config& c) {
    Listener l;
    l.fd = systemd_listen_fd();
    if (l.fd >= 0) {
        int accepting = 0;
        socklen_t len = sizeof accepting;
        if (getsockopt(l.fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) != 0 || !accepting)
            throw std::runtime_error("LISTEN_FDS is set but fd 3 is not a listening socket");
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
    return l;
}

std::string describe_status(int status) {
    if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        const char* name = sigabbrev_np(WTERMSIG(status));
        return std::string("signal ") + (name ? std::string("SIG") + name : std::to_string(WTERMSIG(status)));
    }
    return "status " + std::to_string(status);
}

struct Slot {
    pid_t pid = 0;
    Clock::time_point started{};
    Clock::time_point respawn_at{};
    int backoff_ms = 0;
};

class Master {
public:
    Master(Config cfg, const ConfigReloader& reload, Listener l)
        : cfg_(std::move(cfg)), reload_(reload), listener_(std::move(l)),
          slots_(static_cast<std::size_t>(cfg_.workers)) {}
    void run();

private:
    void spawn(std::size_t i);
    void spawn_due();
    void reap();
    void on_exit(pid_t pid, int status);
    void on_abnormal_exit(Slot& s, Clock::time_point now);
    void begin_stop();
    void signal_all(int sig);
    void reload();
    int poll_timeout_ms() const;
    bool any_children() const;

    Config cfg_;
    const ConfigReloader& reload_;
    Listener listener_;
    std::vector<Slot> slots_;
    std::map<pid_t, int> retiring_;  // workers of older generations: pid -> generation
    std::deque<Clock::time_point> crashes_;
    Clock::time_point paused_until_{};
    bool paused_ = false;
    int generation_ = 1;
    bool stopping_ = false;
    bool killed_ = false;
    Clock::time_point stop_deadline_{};
};

void Master::spawn(std::size_t i) {
    Slot& s = slots_[i];
    // Block everything across fork so the child cannot run the master's handlers before
    // run_worker() has reset them.
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    const pid_t pid = fork();
    if (pid == 0) {
        close(g_pipe[0]);
        close(g_pipe[1]);
        const int rc = run_worker(cfg_, listener_.fd);
        if (__gcov_dump) __gcov_dump();  // _exit skips the instrumented build's profile writer
        _exit(rc);
    }
    const int e = errno;
    sigprocmask(SIG_SETMASK, &old, nullptr);
    const auto now = Clock::now();
    if (pid < 0) {
        log_error("fork failed", {{"slot", static_cast<long long>(i)}, {"error", errno_text(e)}});
        s.respawn_at = now + milliseconds(1000);
        return;
    }
    s.pid = pid;
    s.started = now;
    log_info("worker started", {{"worker", static_cast<long long>(pid)},
                                {"slot", static_cast<long long>(i)},
                                {"generation", generation_}});
}

void Master::spawn_due() {
    const auto now = Clock::now();
    if (now < paused_until_) return;
    if (paused_) {
        paused_ = false;
        log_info("respawning resumed after crash-loop pause");
    }
    for (std::size_t i = 0; i < slots_.size(); ++i) {
        if (slots_[i].pid == 0 && slots_[i].respawn_at <= now) spawn(i);
    }
}

void Master::reap() {
    for (;;) {
        int status = 0;
        const pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid <= 0) return;
        on_exit(pid, status);
    }
}

void Master::on_exit(pid_t pid, int status) {
    const auto old = retiring_.find(pid);
    if (old != retiring_.end()) {
        log_info("old worker exited", {{"worker", static_cast<long long>(pid)},
                                       {"generation", old->second},
                                       {"status", describe_status(status)}});
        retiring_.erase(old);
        return;
    }
    auto it = std::find_if(slots_.begin(), slots_.end(), [pid](const Slot& s) { return s.pid == pid; });
    if (it == slots_.end()) return;
    Slot& s = *it;
    s.pid = 0;
    const auto now = Clock::now();
    const long long slot = it - slots_.begin();
    const long long uptime_ms = std::chrono::duration_cast<milliseconds>(now - s.started).count();
    const std::string how = describe_status(status);
    if (stopping_) {
        log_info("worker exited", {{"worker", static_cast<long long>(pid)}, {"slot", slot}, {"status", how}});
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == kWorkerExitOk) {
        log_info("worker exited; respawning", {{"worker", static_cast<long long>(pid)}, {"slot", slot},
                                               {"status", how}, {"uptime_ms", uptime_ms}});
        s.backoff_ms = 0;
        s.respawn_at = now;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == kWorkerExitDeadline) {
        // The worker already sent the 503 and logged the request id; not a crash.
        log_warn("worker ended by request deadline; respawning",
                 {{"worker", static_cast<long long>(pid)}, {"slot", slot}, {"status", how},
                  {"timeout_ms", cfg_.request_timeout_ms}});
        s.respawn_at = now;
    } else {
        log_error("worker died", {{"worker", static_cast<long long>(pid)}, {"slot", slot},
                                  {"status", how}, {"uptime_ms", uptime_ms}});
        on_abnormal_exit(s, now);
    }
}

void Master::on_abnormal_exit(Slot& s, Clock::time_point now) {
    const auto window = std::chrono::seconds(cfg_.crash_loop_window_s);
    crashes_.push_back(now);
    while (!crashes_.empty() && now - crashes_.front() > window) crashes_.pop_front();
    if (static_cast<int>(crashes_.size()) > cfg_.crash_loop_limit) {
        log_alert("crash loop: respawning paused",
                  {{"abnormal_exits", static_cast<long long>(crashes_.size())},
                   {"window_s", cfg_.crash_loop_window_s}, {"pause_s", cfg_.crash_loop_window_s}});
        paused_until_ = now + window;
        paused_ = true;
        crashes_.clear();
    }
    // A worker that ran for a while before dying does not inherit the old back-off.
    if (now - s.started > std::chrono::seconds(10)) s.backoff_ms = 0;
    s.backoff_ms = s.backoff_ms == 0 ? std::min(100, cfg_.respawn_backoff_max_ms)
                                     : std::min(s.backoff_ms * 2, cfg_.respawn_backoff_max_ms);
    s.respawn_at = now + milliseconds(s.backoff_ms);
}

void Master::signal_all(int sig) {
    for (const Slot& s : slots_) {
        if (s.pid > 0) kill(s.pid, sig);
    }
    for (const auto& r : retiring_) kill(r.first, sig);
}

void Master::begin_stop() {
    if (stopping_) {
        if (!killed_) {
            log_warn("second stop signal: killing workers now");
            signal_all(SIGKILL);
            killed_ = true;
        }
        return;
    }
    stopping_ = true;
    stop_deadline_ = Clock::now() + milliseconds(cfg_.stop_timeout_ms);
    log_info("stopping", {{"stop_timeout_ms", cfg_.stop_timeout_ms}});
    // Remove the socket path first: new connections then fail at once (nginx answers 503)
    // while the workers serve what is already queued, and exit when the queue is empty.
    if (!listener_.created_path.empty()) {
        unlink(listener_.created_path.c_str());
        listener_.created_path.clear();
    }
    signal_all(SIGTERM);
}

void Master::reload() {
    log_info("reloading configuration", {{"path", cfg_.path.empty() ? "-" : cfg_.path}});
    std::vector<std::string> problems;
    Config n;
    try {
        n = reload_(problems);
    } catch (const std::exception& e) {
        problems.push_back(e.what());
    }
    if (!problems.empty()) {
        for (const auto& p : problems) log_error("configuration problem", {{"problem", p}});
        log_error("reload rejected; keeping the running configuration",
                  {{"problems", static_cast<long long>(problems.size())}});
        return;
    }
    if (n.listen != cfg_.listen || n.listen_mode != cfg_.listen_mode ||
        n.listen_backlog != cfg_.listen_backlog) {
        log_warn("listen settings change only on restart; keeping the current socket",
                 {{"listen", cfg_.listen}, {"new_listen", n.listen}});
        n.listen = cfg_.listen;
        n.listen_mode = cfg_.listen_mode;
        n.listen_backlog = cfg_.listen_backlog;
    }
    if (n.pid_file != cfg_.pid_file) {
        log_warn("pid_file changes only on restart", {{"pid_file", cfg_.pid_file}});
        n.pid_file = cfg_.pid_file;
    }
    cfg_ = std::move(n);
    LogLevel level = LogLevel::info;
    if (parse_log_level(cfg_.log_level, level)) set_log_level(level);
    // New generation first, then retire the old one: the shared socket's backlog holds any
    // connection that arrives in between, so nothing is dropped.
    std::vector<pid_t> old;
    for (const Slot& s : slots_) {
        if (s.pid > 0) {
            old.push_back(s.pid);
            retiring_[s.pid] = generation_;
        }
    }
    ++generation_;
    slots_.assign(static_cast<std::size_t>(cfg_.workers), Slot{});
    crashes_.clear();
    paused_until_ = {};
    paused_ = false;
    for (std::size_t i = 0; i < slots_.size(); ++i) spawn(i);
    for (pid_t pid : old) kill(pid, SIGTERM);
    log_info("configuration reloaded", {{"generation", generation_}, {"workers", cfg_.workers},
                                        {"retiring", static_cast<long long>(old.size())}});
}

bool Master::any_children() const {
    return !retiring_.empty() ||
           std::any_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.pid > 0; });
}

int Master::poll_timeout_ms() const {
    const auto now = Clock::now();
    std::optional<Clock::time_point> next;
    if (stopping_) {
        next = killed_ ? now + milliseconds(1000) : stop_deadline_;
    } else {
        for (const Slot& s : slots_) {
            if (s.pid != 0) continue;
            const auto t = std::max(s.respawn_at, paused_until_);
            if (!next || t < *next) next = t;
        }
    }
    if (!next) return -1;
    const auto ms = std::chrono::duration_cast<milliseconds>(*next - now).count() + 1;
    return static_cast<int>(std::clamp<long long>(ms, 0, 60000));
}

void Master::run() {
    log_info("master started",
             {{"workers", cfg_.workers},
              {"listen", listener_.from_systemd ? std::string("systemd:fd3") : cfg_.listen}});
    for (std::size_t i = 0; i < slots_.size(); ++i) spawn(i);
    for (;;) {
        struct pollfd p {g_pipe[0], POLLIN, 0};
        if (poll(&p, 1, poll_timeout_ms()) < 0 && errno != EINTR)
            log_error("poll failed", {{"error", errno_text(errno)}});
        bool stop = false, hup = false;
        unsigned char buf[64];
        ssize_t n;
        while ((n = read(g_pipe[0], buf, sizeof buf)) > 0) {
            for (ssize_t k = 0; k < n; ++k) {
                if (buf[k] == SIGTERM || buf[k] == SIGINT) stop = true;
                if (buf[k] == SIGHUP) hup = true;
            }
        }
        reap();  // on every wake-up, so a dropped SIGCHLD byte can never leave a zombie
        if (stop) begin_stop();
        if (hup && !stopping_) reload();
        if (stopping_) {
            if (!any_children()) break;
            if (!killed_ && Clock::now() >= stop_deadline_) {
                log_warn("stop timeout: killing remaining workers");
                signal_all(SIGKILL);
                killed_ = true;
            }
            continue;
        }
        spawn_due();
    }
    log_info("stopped");
}

void install_master_signals() {
    if (pipe2(g_pipe, O_NONBLOCK | O_CLOEXEC) != 0) fail("pipe", errno);
    struct sigaction sa {};
    sa.sa_handler = on_master_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &sa, nullptr);
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sa, nullptr);
    // A closed stderr (journald restarting) must not kill the master.
    signal(SIGPIPE, SIG_IGN);
}

bool write_pid_file(const std::string& path) {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return false;
    const std::string s = std::to_string(static_cast<long long>(getpid())) + "\n";
    const bool ok = write_all_signal_safe(fd, s.data(), s.size());
    return close(fd) == 0 && ok;
}

}  // namespace

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

int run_supervisor(const Config& cfg, const ConfigReloader& reload) {
    Listener listener;
    try {
        install_master_signals();
        listener = open_listener(cfg);
    } catch (const std::exception& e) {
        log_error("cannot start", {{"error", e.what()}});
        return 1;
    }
    const bool pid_written = !cfg.pid_file.empty() && write_pid_file(cfg.pid_file);
    if (!cfg.pid_file.empty() && !pid_written) {
        log_error("cannot write pid file", {{"pid_file", cfg.pid_file}, {"error", errno_text(errno)}});
        if (!listener.created_path.empty()) unlink(listener.created_path.c_str());
        return 1;
    }
    Master master(cfg, reload, listener);
    master.run();  // unlinks the unix socket path when the stop begins
    if (pid_written) unlink(cfg.pid_file.c_str());
    close(listener.fd);
    return 0;
}

}  // namespace notesd
