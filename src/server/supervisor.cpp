#include "server/supervisor.hpp"

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <deque>
#include <map>
#include <memory>
#include <stdexcept>

#include "api/router.hpp"
#include "base/log.hpp"
#include "base/phase_clock.hpp"
#include "server/listener.hpp"
#include "server/merger.hpp"
#include "server/scoreboard.hpp"
#include "server/status.hpp"
#include "server/status_server.hpp"
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
    bool ever_started = false;
};

// The master ends a worker whose request is past its deadline by this much: the worker's own
// SIGALRM answers at the deadline itself, so the master acts only where that could not run.
constexpr std::int64_t kDeadlineGraceNs = 250 * 1000000LL;
// After SIGTERM, the wait before SIGKILL (a stopped or wedged worker never handles SIGTERM).
constexpr auto kKillWait = milliseconds(250);
// How often the master looks at the scoreboard while a worker is busy.
constexpr int kScoreboardTickMs = 50;

// What the master keeps per live worker besides its slot.
struct WorkerRecord {
    int cell = -1;        // scoreboard cell, -1 when none was free
    int generation = 0;
    bool terminating = false;          // ended by the master past its deadline
    Clock::time_point kill_at{};       // SIGKILL if it is still there then
    bool killed = false;
};

struct LifecycleCounters {
    std::uint64_t restarts = 0, crashes = 0, recycled = 0, deadline_exits = 0, deadline_kills = 0;
};

class Master {
public:
    Master(Config cfg, const ConfigReloader& reload, Listener l, Scoreboard board)
        : cfg_(std::move(cfg)), reload_(reload), listener_(std::move(l)),
          slots_(static_cast<std::size_t>(cfg_.workers)), board_(board),
          start_time_s_(std::time(nullptr)) {}
    void run();

private:
    void enforce_deadlines();
    void forget_worker(pid_t pid);
    StatusReport status_report() const;
    std::string status_page(const std::string& query) const;
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
    Scoreboard board_;
    std::map<pid_t, WorkerRecord> workers_;  // every live worker, of every generation
    MergerChild merger_;
    LifecycleCounters counts_;
    std::time_t start_time_s_;
};

void Master::spawn(std::size_t i) {
    Slot& s = slots_[i];
    // Block everything across fork so the child cannot run the master's handlers before
    // run_worker() has reset them.
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    // The cell is claimed before fork (the child must know it), with a placeholder pid.
    const int cell = board_.valid() ? board_.claim(-1) : -1;
    const pid_t pid = fork();
    if (pid == 0) {
        close(g_pipe[0]);
        close(g_pipe[1]);
        const WorkerSeat seat = cell >= 0 ? WorkerSeat(&board_.memory(), &board_.cell(cell))
                                          : WorkerSeat(board_.valid() ? &board_.memory() : nullptr, nullptr);
        const int rc = run_worker(cfg_, listener_.fd, seat);
        if (__gcov_dump) __gcov_dump();  // _exit skips the instrumented build's profile writer
        _exit(rc);
    }
    const int e = errno;
    sigprocmask(SIG_SETMASK, &old, nullptr);
    const auto now = Clock::now();
    if (pid < 0) {
        if (cell >= 0) board_.release(cell);
        log_error("fork failed", {{"slot", static_cast<long long>(i)}, {"error", errno_text(e)}});
        s.respawn_at = now + milliseconds(1000);
        return;
    }
    if (cell >= 0) board_.cell(cell).pid.store(pid, std::memory_order_relaxed);
    else if (board_.valid()) log_warn("scoreboard full: worker runs without a cell", {{"worker", static_cast<long long>(pid)}});
    workers_[pid] = WorkerRecord{cell, generation_};
    if (s.ever_started) ++counts_.restarts;
    s.ever_started = true;
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
    merger_.start_if_due(cfg_, g_pipe);
}

void Master::reap() {
    for (;;) {
        int status = 0;
        const pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid <= 0) return;
        on_exit(pid, status);
    }
}

void Master::forget_worker(pid_t pid) {
    const auto w = workers_.find(pid);
    if (w == workers_.end()) return;
    if (w->second.cell >= 0) board_.release(w->second.cell);
    workers_.erase(w);
}

void Master::on_exit(pid_t pid, int status) {
    if (merger_.on_exit(pid, describe_status(status), WIFEXITED(status) && WEXITSTATUS(status) == 0,
                        stopping_, cfg_.respawn_backoff_max_ms))
        return;
    const auto rec = workers_.find(pid);
    const bool ended_by_master = rec != workers_.end() && rec->second.terminating;
    forget_worker(pid);
    if (ended_by_master) ++counts_.deadline_kills;
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
    } else if (ended_by_master) {
        // Logged with its request id when the master ended it; not a crash, no back-off.
        log_warn("worker ended past its request deadline; respawning",
                 {{"worker", static_cast<long long>(pid)}, {"slot", slot}, {"status", how}});
        s.respawn_at = now;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == kWorkerExitOk) {
        ++counts_.recycled;
        log_info("worker exited; respawning", {{"worker", static_cast<long long>(pid)}, {"slot", slot},
                                               {"status", how}, {"uptime_ms", uptime_ms}});
        s.backoff_ms = 0;
        s.respawn_at = now;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == kWorkerExitDeadline) {
        // The worker already sent the 503 and logged the request id; not a crash.
        ++counts_.deadline_exits;
        log_warn("worker ended by request deadline; respawning",
                 {{"worker", static_cast<long long>(pid)}, {"slot", slot}, {"status", how},
                  {"timeout_ms", cfg_.request_timeout_ms}});
        s.respawn_at = now;
    } else {
        ++counts_.crashes;
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
    if (merger_.pid() > 0) kill(merger_.pid(), sig);
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
    if (n.status_listen != cfg_.status_listen) {
        log_warn("status_listen changes only on restart", {{"status_listen", cfg_.status_listen}});
        n.status_listen = cfg_.status_listen;
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
    if (merger_.pid() > 0) {  // retired like the old workers, with the old configuration
        retiring_[merger_.pid()] = generation_;
        old.push_back(merger_.release());
    }
    ++generation_;
    slots_.assign(static_cast<std::size_t>(cfg_.workers), Slot{});
    crashes_.clear();
    paused_until_ = {};
    paused_ = false;
    for (std::size_t i = 0; i < slots_.size(); ++i) spawn(i);
    merger_.start_if_due(cfg_, g_pipe);
    for (pid_t pid : old) kill(pid, SIGTERM);
    log_info("configuration reloaded", {{"generation", generation_}, {"workers", cfg_.workers},
                                        {"retiring", static_cast<long long>(old.size())}});
}

// php-fpm's request_terminate_timeout: a worker still inside a request past its deadline (input,
// handler or response) plus the grace gets SIGTERM, then SIGKILL after kKillWait. Its client
// gets nginx's JSON 503 (nginx sees the connection close without an answer: 502).
void Master::enforce_deadlines() {
    if (!board_.valid()) return;
    const std::int64_t now_ns = monotonic_ns();
    const auto now = Clock::now();
    for (auto& [pid, w] : workers_) {
        if (w.cell < 0) continue;
        if (w.terminating) {
            if (!w.killed && now >= w.kill_at) {
                kill(pid, SIGKILL);
                w.killed = true;
                log_warn("worker did not end after SIGTERM: killed", {{"worker", static_cast<long long>(pid)}});
            }
            continue;
        }
        const WorkerCell& c = board_.cell(w.cell);
        const std::int64_t started = c.started_ns.load(std::memory_order_relaxed);
        const std::int64_t deadline = c.deadline_ns.load(std::memory_order_relaxed);
        if (started == 0 || deadline == 0 || now_ns <= deadline + kDeadlineGraceNs) continue;
        // Re-read: the worker may have finished and started another request meanwhile.
        if (c.started_ns.load(std::memory_order_relaxed) != started) continue;
        const CellText t = read_cell_text(c);
        const auto phase = static_cast<Phase>(c.phase.load(std::memory_order_relaxed));
        log_event(LogLevel::error, phase == Phase::read ? std::string_view() : t.request_id,
                  "request past its deadline: ending the worker",
                  {{"worker", static_cast<long long>(pid)}, {"phase", phase_name(phase)},
                   {"method", phase == Phase::read ? "" : t.method},
                   {"path", phase == Phase::read ? "" : t.path},
                   {"elapsed_ms", static_cast<long long>((now_ns - started) / 1000000)},
                   {"request_timeout_ms", cfg_.request_timeout_ms},
                   {"io_timeout_ms", cfg_.io_timeout_ms}});
        kill(pid, SIGTERM);
        w.terminating = true;
        w.kill_at = now + kKillWait;
    }
}

StatusReport Master::status_report() const {
    StatusReport r;
    r.version = PACKAGE_VERSION;
    r.start_time_s = start_time_s_;
    r.now_s = std::time(nullptr);
    r.pool_size = cfg_.workers;
    r.generation = generation_;
    r.slow_request_ms = cfg_.slow_request_ms;
    r.request_timeout_ms = cfg_.request_timeout_ms;
    r.restarts = counts_.restarts;
    r.crashes = counts_.crashes;
    r.recycled = counts_.recycled;
    r.deadline_exits = counts_.deadline_exits;
    r.deadline_kills = counts_.deadline_kills;
    long long queued = -1, max = -1;
    if (listen_queue(listener_.fd, queued, max)) {
        r.listen_queue = queued;
        r.listen_queue_max = max;
    }
    if (!board_.valid()) return r;
    read_pool_counters(board_.memory(), r);
    const std::int64_t now_ns = monotonic_ns();
    for (const auto& [pid, w] : workers_) {
        r.workers.push_back(read_worker(pid, w.generation, w.cell >= 0 ? &board_.cell(w.cell) : nullptr, now_ns));
        (r.workers.back().state == "busy" ? r.busy : r.idle) += 1;
    }
    return r;
}

std::string Master::status_page(const std::string& query) const {
    const bool prometheus = query.find("format=prometheus") != std::string::npos;
    const std::string body = prometheus ? render_status_prometheus(status_report())
                                        : render_status_json(status_report());
    std::string out = "Status: 200 OK\r\nContent-Type: ";
    out += prometheus ? "text/plain; version=0.0.4; charset=utf-8" : "application/json; charset=utf-8";
    out += "\r\nCache-Control: no-store\r\n\r\n";
    out += body;
    return out;
}

bool Master::any_children() const {
    return !retiring_.empty() || merger_.pid() > 0 ||
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
        const auto m = merger_.next_start(cfg_);
        if (m && (!next || *m < *next)) next = m;
    }
    // While any worker is inside a request, look at the scoreboard every tick.
    const bool busy = board_.valid() && std::any_of(workers_.begin(), workers_.end(), [this](const auto& w) {
        return w.second.cell >= 0 && board_.cell(w.second.cell).started_ns.load(std::memory_order_relaxed) != 0;
    });
    if (busy || std::any_of(workers_.begin(), workers_.end(), [](const auto& w) { return w.second.terminating; }))
        next = next ? std::min(*next, now + milliseconds(kScoreboardTickMs)) : now + milliseconds(kScoreboardTickMs);
    if (!next) return -1;
    const auto ms = std::chrono::duration_cast<milliseconds>(*next - now).count() + 1;
    return static_cast<int>(std::clamp<long long>(ms, 0, 60000));
}

void Master::run() {
    log_info("master started",
             {{"workers", cfg_.workers},
              {"listen", listener_.from_systemd ? std::string("systemd:fd3") : cfg_.listen}});
    std::unique_ptr<StatusServer> status;
    if (listener_.status_fd >= 0) {
        status = std::make_unique<StatusServer>(listener_.status_fd, cfg_.io_timeout_ms,
                                                [this](const std::string& q) { return status_page(q); });
        log_info("status page listening", {{"status_listen", listener_.status_address}});
    }
    for (std::size_t i = 0; i < slots_.size(); ++i) spawn(i);
    merger_.start_if_due(cfg_, g_pipe);
    std::vector<pollfd> fds;
    for (;;) {
        fds.assign(1, pollfd{g_pipe[0], POLLIN, 0});
        int timeout = poll_timeout_ms();
        if (status) {
            status->add_pollfds(fds);
            const int t = status->next_timeout_ms();
            if (t >= 0 && (timeout < 0 || t < timeout)) timeout = t;
        }
        if (poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR)
            log_error("poll failed", {{"error", errno_text(errno)}});
        if (status) status->on_poll(fds);
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
        enforce_deadlines();
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
    Scoreboard board;
    try {
        board = Scoreboard::create();
    } catch (const std::exception& e) {
        // Without it the pool still serves; only deadlines past the workers' own and the
        // status page's counters are lost.
        log_error("no scoreboard: serving without the master's deadline and counters", {{"error", e.what()}});
    }
    const std::string status_path = listener.status_created_path;
    Master master(cfg, reload, listener, board);
    master.run();  // unlinks the unix socket path when the stop begins
    if (pid_written) unlink(cfg.pid_file.c_str());
    if (!status_path.empty()) unlink(status_path.c_str());
    close(listener.fd);
    if (listener.status_fd >= 0) close(listener.status_fd);
    return 0;
}

}  // namespace notesd
