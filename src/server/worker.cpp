#include "server/worker.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <exception>
#include <memory>
#include <string>

#include "api/app.hpp"
#include "api/errors.hpp"
#include "api/router.hpp"
#include "base/log.hpp"
#include "base/phase_clock.hpp"
#include "server/fcgi_io.hpp"

namespace notesd {

namespace {

volatile sig_atomic_t g_stop = 0;
volatile sig_atomic_t g_deadline_armed = 0;

// Everything the SIGALRM handler needs, prepared before the timer is armed, so the handler
// only copies bytes and calls write(2) and _exit(2).
struct DeadlineState {
    std::string reply;       // raw FastCGI records of the 503 response
    int fd = -1;             // the request's connection
    std::string log_head;    // " lvl=error pid=… req=… msg=… … dur_ms="
    std::string log_buf;     // room for "ts=" + timestamp + head + duration + "\n"
    struct timespec start {};
};
DeadlineState g_deadline;

extern "C" void on_sigterm(int) { g_stop = 1; }

long long elapsed_ms(const struct timespec& since) {
    struct timespec now {};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - since.tv_sec) * 1000LL + (now.tv_nsec - since.tv_nsec) / 1000000;
}

extern "C" void on_sigalrm(int) {
    if (!g_deadline_armed) return;
    DeadlineState& d = g_deadline;
    write_all_signal_safe(d.fd, d.reply.data(), d.reply.size());
    char* p = &d.log_buf[0];
    std::size_t n = 0;
    p[n++] = 't';
    p[n++] = 's';
    p[n++] = '=';
    n += format_log_timestamp(p + n, 32);
    for (char c : d.log_head) p[n++] = c;
    n += format_log_int(p + n, 24, elapsed_ms(d.start));
    p[n++] = '\n';
    write_all_signal_safe(STDERR_FILENO, p, n);
    _exit(kWorkerExitDeadline);
}

void set_handler(int sig, void (*fn)(int)) {
    struct sigaction sa {};
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: a stop request must interrupt ppoll()
    sigaction(sig, &sa, nullptr);
}

// After fork the child still has the master's handlers (they write to a pipe we no longer
// own). libfcgi's FCGX_Init only installs its handlers where the disposition is default, so
// reset first, then install ours.
void setup_signals() {
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGCHLD, SIGALRM, SIGPIPE}) set_handler(sig, SIG_DFL);
    // Ctrl-C and a terminal hang-up reach the whole process group; the master turns them into
    // a graceful SIGTERM for each worker, so workers ignore them instead of dying mid-request.
    set_handler(SIGINT, SIG_IGN);
    set_handler(SIGHUP, SIG_IGN);
    set_handler(SIGTERM, on_sigterm);
    set_handler(SIGALRM, on_sigalrm);
    // If the master is killed outright, stop gracefully instead of serving on unsupervised.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() == 1) g_stop = 1;
    // SIGTERM stays blocked except inside ppoll(): it can then never interrupt libfcgi in the
    // middle of accept()/read() (which would drop an accepted connection) nor a request.
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigprocmask(SIG_SETMASK, &mask, nullptr);
}

void arm_deadline(const Config& cfg, const FcgiEndpoint& ep, const HttpRequest& req) {
    DeadlineState& d = g_deadline;
    const HttpResponse r = render_error(
        unavailable("the request did not complete within the deadline", 1), req.request_id);
    d.reply = ep.raw_response(r);
    d.fd = ep.connection_fd();
    d.log_head = " lvl=error pid=" + std::to_string(static_cast<long long>(getpid()));
    append_log_field(d.log_head, "req", req.request_id);
    append_log_field(d.log_head, "msg", "request deadline exceeded");
    append_log_field(d.log_head, "method", req.method);
    append_log_field(d.log_head, "path", req.path);
    append_log_field(d.log_head, "status", "503");
    append_log_field(d.log_head, "timeout_ms", std::to_string(cfg.request_timeout_ms));
    d.log_head += " dur_ms=";
    d.log_buf.assign(3 + 32 + d.log_head.size() + 24 + 1, '\0');
    clock_gettime(CLOCK_MONOTONIC, &d.start);
    g_deadline_armed = 1;
    struct itimerval t {};
    t.it_value.tv_sec = cfg.request_timeout_ms / 1000;
    t.it_value.tv_usec = (cfg.request_timeout_ms % 1000) * 1000;
    setitimer(ITIMER_REAL, &t, nullptr);
}

void disarm_deadline() {
    struct itimerval t {};
    setitimer(ITIMER_REAL, &t, nullptr);
    g_deadline_armed = 0;
}

#ifdef NOTESD_TEST_HOOKS
// Test builds only (t/notesd-test-hooks, built by make check, never installed; README "Tests"),
// driven by the query string:
//   notesd_test_hang=1         wedges the worker the way a process stuck in the kernel is
//                              wedged: every signal blocked (its own deadline cannot fire),
//                              never returning. Only the master's scoreboard can end it.
//   notesd_test_sleep_ms=N     the handler takes N ms more (signals as usual): a request that
//                              is surely in progress, for SIGSTOP and status tests.
void test_hook(const HttpRequest& req) {
    const auto sleep_at = req.query.find("notesd_test_sleep_ms=");
    if (sleep_at != std::string::npos) {
        const long ms = std::strtol(req.query.c_str() + sleep_at + 21, nullptr, 10);
        struct timespec ts {ms / 1000, (ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
    }
    if (req.query.find("notesd_test_hang=1") == std::string::npos) return;
    log_event(LogLevel::warn, req.request_id, "test hook: hanging with every signal blocked");
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, nullptr);
    for (;;) pause();
}
#else
inline void test_hook(const HttpRequest&) {}
#endif

HttpResponse call_app(App& app, const HttpRequest& req) {
    test_hook(req);
    try {
        return app.handle(req);
    } catch (const std::exception& e) {
        log_event(LogLevel::error, req.request_id, "application error", {{"error", e.what()}});
    } catch (...) {
        log_event(LogLevel::error, req.request_id, "application error");
    }
    return render_error(ApiError(500, "INTERNAL_ERROR", "internal error"), req.request_id);
}

std::int64_t ms_to_ns(int ms) { return static_cast<std::int64_t>(ms) * 1000000; }

// One line for a request over slow_request_ms, with the time of each phase.
void log_slow(const Config& cfg, const PhaseClock& clock, const std::string& request_id,
              const std::string& method, const std::string& path, int status, std::int64_t total_ns) {
    auto ms = [](std::int64_t ns) { return std::to_string(ns / 1000000) + "." +
                                           std::to_string(ns / 100000 % 10); };
    log_event(LogLevel::warn, request_id, "slow request",
              {{"method", method}, {"path", path}, {"status", status}, {"dur_ms", ms(total_ns)},
               {"slow_request_ms", cfg.slow_request_ms},
               {"read_ms", ms(clock.spent_ns(Phase::read))}, {"auth_ms", ms(clock.spent_ns(Phase::auth))},
               {"parse_ms", ms(clock.spent_ns(Phase::parse))}, {"store_ms", ms(clock.spent_ns(Phase::store))},
               {"rank_ms", ms(clock.spent_ns(Phase::rank))}, {"render_ms", ms(clock.spent_ns(Phase::render))},
               {"write_ms", ms(clock.spent_ns(Phase::write))}});
}

// The connection is accepted and its params read (the clock runs since before the accept).
void handle_one(const Config& cfg, App& app, FcgiEndpoint& ep, WorkerSeat& seat) {
    PhaseClock& clock = request_clock();
    HttpResponse resp;
    std::string method, path, request_id;
    bool delivered = false;
    std::int64_t total_ns = 0;
    bool slow = false;
    {
        FcgiRequestGuard guard(ep);
        IncomingRequest in = ep.read_request([&cfg](const HttpRequest& r) {
            return body_limit(r.method, r.path, static_cast<std::size_t>(cfg.max_body_bytes));
        });
        method = in.request.method;
        path = in.request.path;
        request_id = in.request.request_id;
        if (ep.input_timed_out()) seat.input_failed();
        if (in.rejection) {
            resp = std::move(*in.rejection);
        } else {
            seat.serving(request_id, method, path, monotonic_ns() + ms_to_ns(cfg.request_timeout_ms));
            clock.mark(Phase::auth);
            arm_deadline(cfg, ep, in.request);
            resp = call_app(app, in.request);
            disarm_deadline();
        }
        clock.mark(Phase::write);
        seat.writing(monotonic_ns() + ms_to_ns(cfg.io_timeout_ms));
        delivered = ep.write_response(resp);
        total_ns = clock.stop();
        slow = cfg.slow_request_ms > 0 && total_ns >= ms_to_ns(cfg.slow_request_ms);
        // Counted before the flush: a client that has its answer finds it in the status.
        seat.count(resp.endpoint, resp.status, total_ns, slow);
    }  // FCGX_Finish_r: nginx has the whole response before we spend time on logging
    seat.idle();
    app.after_response();  // e.g. a WAL checkpoint, no longer in some request's path
    if (!delivered) log_event(LogLevel::warn, request_id, "client went away before the response");
    if (slow) log_slow(cfg, clock, request_id, method, path, resp.status, total_ns);
    log_event(resp.status >= 500 ? LogLevel::warn : LogLevel::info, request_id, "request",
              {{"method", method}, {"path", path}, {"status", resp.status},
               {"dur_ms", static_cast<long long>(total_ns / 1000000)}, {"user", resp.user_id}});
}

// Accepts one connection and serves it; says what accept found.
AcceptResult accept_and_handle(const Config& cfg, App& app, FcgiEndpoint& ep, WorkerSeat& seat) {
    PhaseClock& clock = request_clock();
    clock.start(Phase::read);
    seat.reading(clock.started_ns(), clock.started_ns() + ms_to_ns(cfg.io_timeout_ms));
    const AcceptResult r = ep.accept();
    if (r == AcceptResult::request) {
        seat.accepted();
        handle_one(cfg, app, ep, seat);
        return r;
    }
    clock.stop();
    seat.idle();
    if (r == AcceptResult::input_failed) {
        seat.accepted();
        seat.input_failed();
        log_warn("FastCGI connection dropped: its params stalled past io_timeout_ms or broke off",
                 {{"io_timeout_ms", cfg.io_timeout_ms}});
    } else if (r == AcceptResult::error) {
        log_error("accept failed", {{"errno", ep.error_number()}});
    }
    return r;
}

// Waits for a connection with SIGTERM unblocked; false when the worker should stop.
bool wait_for_connection(int listen_fd, int& exit_code) {
    sigset_t during;
    sigprocmask(SIG_SETMASK, nullptr, &during);
    sigdelset(&during, SIGTERM);
    struct pollfd p {listen_fd, POLLIN, 0};
    for (;;) {
        if (g_stop) return false;
        const int rc = ppoll(&p, 1, nullptr, &during);
        // When the socket is already readable, Linux returns without delivering a pending
        // SIGTERM (the old mask comes back first), so a busy worker must look for it itself.
        sigset_t pending;
        if (!g_stop && sigpending(&pending) == 0 && sigismember(&pending, SIGTERM)) g_stop = 1;
        if (g_stop) return false;
        if (rc > 0 && (p.revents & POLLIN)) return true;
        if (rc < 0 && errno == EINTR) continue;
        log_error("listening socket failed", {{"errno", errno}, {"revents", p.revents}});
        exit_code = kWorkerExitAcceptFailed;
        return false;
    }
}

int serve(const Config& cfg, int listen_fd, App& app, FcgiEndpoint& ep, WorkerSeat& seat) {
    int served = 0;
    int exit_code = kWorkerExitOk;
    while (wait_for_connection(listen_fd, exit_code)) {
        // Every idle worker wakes for a connection; the ones that lose the race find none.
        const AcceptResult r = accept_and_handle(cfg, app, ep, seat);
        if (r == AcceptResult::error) return kWorkerExitAcceptFailed;
        if (r == AcceptResult::request && ++served >= cfg.max_requests) {
            log_info("worker recycling", {{"served", served}, {"max_requests", cfg.max_requests}});
            return kWorkerExitOk;
        }
    }
    if (exit_code != kWorkerExitOk) return exit_code;
    // Stopping: connections already queued on the socket were accepted by the kernel and nginx
    // is waiting on them, so serve them (the socket is non-blocking: none left means done).
    // A TCP socket keeps filling under load, so stop taking work at half the master's
    // stop_timeout_ms, leaving the other half for the requests in hand before SIGKILL.
    const auto drain_until =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(cfg.stop_timeout_ms / 2);
    int drained = 0;
    while (served < cfg.max_requests && std::chrono::steady_clock::now() < drain_until) {
        const AcceptResult r = accept_and_handle(cfg, app, ep, seat);
        if (r == AcceptResult::request) {
            ++served;
            ++drained;
        } else if (r != AcceptResult::input_failed) {
            break;
        }
    }
    log_debug("worker stopping", {{"served", served}, {"drained", drained}});
    return kWorkerExitOk;
}

}  // namespace

int run_worker(const Config& cfg, int listen_fd, WorkerSeat seat) {
    setup_signals();
    if (seat.cell()) request_clock().publish_to(&seat.cell()->phase);
    try {
        FcgiEndpoint ep(listen_fd, cfg.io_timeout_ms);
        std::unique_ptr<App> app;
        try {
            app = std::make_unique<App>(cfg);
        } catch (const std::exception& e) {
            log_error("worker start failed", {{"error", e.what()}});
            return kWorkerExitInitFailed;
        }
        log_debug("worker ready");
        return serve(cfg, listen_fd, *app, ep, seat);
    } catch (const std::exception& e) {
        log_error("worker failed", {{"error", e.what()}});
        return kWorkerExitInitFailed;
    }
}

}  // namespace notesd
