#include "server/merger.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include "base/log.hpp"
#include "base/util.hpp"
#include "server/merger_priority.hpp"
#include "store/store.hpp"
#ifdef NOTESD_TEST_HOOKS
#include <cstdlib>

#include "store/soci_store.hpp"
#endif

namespace notesd {

namespace {

// Steps per user in one pass: a user with much to merge does not hold up the others for long.
constexpr int kStepsPerUserPass = 64;

extern "C" void on_merger_term(int) {
    // Every transaction of a step is atomic and every state between them is exact (what
    // SIGKILL tests show), so a stop need not wait for a long merge to end.
    _exit(0);
}

void setup_merger_signals() {
    struct sigaction sa {};
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGCHLD, SIGALRM, SIGUSR1, SIGUSR2}) sigaction(sig, &sa, nullptr);
    sa.sa_handler = SIG_IGN;  // the master turns Ctrl-C and hang-ups into SIGTERM
    for (int sig : {SIGINT, SIGHUP, SIGPIPE}) sigaction(sig, &sa, nullptr);
    sa.sa_handler = on_merger_term;
    sigaction(SIGTERM, &sa, nullptr);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() == 1) _exit(0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);  // the master blocks everything across fork
}

long long now_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

void sleep_ms(int ms) {
    timespec t{ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0) {
    }
}

#ifdef NOTESD_TEST_HOOKS
// Test builds only (t/notesd-test-hooks): with NOTESD_TEST_FOLD_PAUSE_MS=N in the environment
// each fold logs "test hook: fold written" once its segment is written hidden and waits N ms
// before the publish, so a test can SIGKILL the merger inside that window every time instead
// of by chance (t/e2e/test_merger.py KillLoopDuringFolds); NOTESD_TEST_MERGE_PAUSE_MS does the
// same for merge steps ("test hook: merge written"; KillLoopDuringBackgroundMerge).
std::function<void()> pause_hook(const char* variable, const char* message) {
    const char* env = std::getenv(variable);
    if (!env) return {};
    const int ms = std::atoi(env);
    return [ms, message] {
        log_warn(message, {{"pause_ms", ms}});
        sleep_ms(ms);
    };
}

void install_test_hooks(Store& store) {
    auto* soci = dynamic_cast<SociStore*>(&store);
    if (!soci) return;
    soci->on_fold_written(pause_hook("NOTESD_TEST_FOLD_PAUSE_MS", "test hook: fold written"));
    soci->on_merge_written(pause_hook("NOTESD_TEST_MERGE_PAUSE_MS", "test hook: merge written"));
}
#else
inline void install_test_hooks(Store&) {}
#endif

class Merger {
public:
    Merger(const Config& cfg, MergerPriority& priority)
        : cfg_(cfg), policy_(merger_policy(cfg)), priority_(priority) {}

    /// One round over the users; true when a user still has work after its steps (writes
    /// come faster than a pass folds them), so the next pass should start at once.
    bool pass() {
        if (!store_) {
            store_ = open_store(cfg_.db, cfg_.db_busy_timeout_ms, cfg_.db_connect_timeout_s);
            // as a worker: no WAL checkpoint inside a commit, one after each step instead
            store_->defer_housekeeping();
            store_->listen_to_step_writes(&priority_);
            install_test_hooks(*store_);
        }
        bool more = false;
        for (const UserInfo& u : store_->list_users()) more = user(u.id) || more;
        return more;
    }
    void forget_store() { store_.reset(); }

private:
    // The merger's own CPU time (a process of one thread): what index upkeep costs the machine
    // per step, steadier than its wall time beside a loaded pool (tools/bench.py sums it).
    static long long process_cpu_us() {
        timespec ts{};
        if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
        return static_cast<long long>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
    }

    // True when the user's steps ran out with work left, having done some (a step that keeps
    // losing to a pack does not make the merger spin).
    bool user(long long id) {
        if (cleaned_.insert(id).second) {
            const long long dropped = store_->drop_interrupted_merges(id);
            if (dropped > 0) log_info("merger removed interrupted merges", {{"user", id}, {"segments", dropped}});
        }
        bool progress = false;
        for (int i = 0; i < kStepsPerUserPass; ++i) {
            const IndexState s = store_->index_state(id);
            priority_.set_behind(index_behind(policy_, s));
            const long long now = now_us();
            if (s.pending_notes > 0) pending_since_.emplace(id, now);
            else pending_since_.erase(id);
            const auto since = pending_since_.find(id);
            MergePolicy policy = policy_;
            policy.fold_pending_postings = fold_budget_;
            const MergePlan plan =
                plan_merge(policy, s, since == pending_since_.end() ? 0 : since->second, now);
            if (plan.idle()) {
                priority_.set_behind(false);
                return false;
            }
            const long long cpu_before = process_cpu_us();
            const IndexStep step = store_->run_index_step(id, plan);
            const long long cpu_us = process_cpu_us() - cpu_before;
            fold_budget_ = next_fold_budget(policy_, fold_budget_, step.fold_postings,
                                            step.fold_publish_us);
            progress = progress || step.folded_notes > 0 || step.merged_segments > 0;
            store_->housekeeping();
            longest_us_ = std::max(longest_us_, step.longest_write_us);
            log_info("merge step", {{"user", id},
                                    {"folded_notes", step.folded_notes},
                                    {"merged_segments", step.merged_segments},
                                    {"lost", step.lost ? "yes" : "no"},
                                    {"transactions", step.write_transactions},
                                    {"longest_write_us", step.longest_write_us},
                                    {"longest_write", step.longest_write_op},
                                    {"longest_write_us_ever", longest_us_},
                                    {"fold_budget", fold_budget_},
                                    {"cpu_us", cpu_us}});
        }
        return progress;
    }

    const Config& cfg_;
    const MergePolicy policy_;
    MergerPriority& priority_;
    std::unique_ptr<Store> store_;
    std::set<long long> cleaned_;                 // users whose interrupted merges are gone
    std::map<long long, long long> pending_since_;  // user -> when rows were first seen pending
    long long longest_us_ = 0;
    // The postings of the next fold of pending entries: one budget for every user, as the cost
    // of a term change is the database's more than the user's. It starts small, so that the
    // first fold on a slow backend does not hold the lock for long, and doubles while folds
    // publish fast.
    long long fold_budget_ = policy_.fold_pending_postings / 8;
};

}  // namespace

void MergerChild::start_if_due(const Config& cfg, const int close_fd[2]) {
    if (pid_ != 0 || cfg.merge_interval_ms <= 0 || Clock::now() < start_at_) return;
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    const pid_t pid = fork();
    if (pid == 0) {
        close(close_fd[0]);
        close(close_fd[1]);
        run_merger(cfg);
    }
    const int e = errno;
    sigprocmask(SIG_SETMASK, &old, nullptr);
    started_ = Clock::now();
    if (pid < 0) {
        log_error("fork of the merger failed", {{"error", std::strerror(e)}});
        start_at_ = started_ + std::chrono::seconds(1);
        return;
    }
    pid_ = pid;
    log_info("merger started", {{"merger", static_cast<long long>(pid)}});
}

bool MergerChild::on_exit(pid_t pid, const std::string& status, bool clean, bool stopping,
                          int backoff_max_ms) {
    if (pid != pid_ || pid == 0) return false;
    pid_ = 0;
    const auto now = Clock::now();
    if (stopping) {
        log_info("merger exited", {{"merger", static_cast<long long>(pid)}, {"status", status}});
        return true;
    }
    // A merger that ran for a while before dying does not inherit the old back-off.
    if (clean || now - started_ > std::chrono::seconds(10)) backoff_ms_ = 0;
    backoff_ms_ = backoff_ms_ == 0 ? std::min(100, backoff_max_ms) : std::min(backoff_ms_ * 2, backoff_max_ms);
    start_at_ = now + std::chrono::milliseconds(backoff_ms_);
    log_error("merger died; restarting", {{"merger", static_cast<long long>(pid)}, {"status", status},
                                          {"backoff_ms", backoff_ms_}});
    return true;
}

pid_t MergerChild::release() {
    const pid_t pid = pid_;
    pid_ = 0;
    start_at_ = {};
    return pid;
}

std::optional<MergerChild::Clock::time_point> MergerChild::next_start(const Config& cfg) const {
    if (pid_ != 0 || cfg.merge_interval_ms <= 0) return std::nullopt;
    return start_at_;
}

MergePolicy merger_policy(const Config& cfg) {
    MergePolicy p;
    p.fold_delay_us = static_cast<long long>(cfg.merge_fold_delay_ms) * 1000;
    return p;
}

void run_merger(const Config& cfg) {
    setup_merger_signals();
    MergerPriority priority(cfg.merge_nice);
    log_info("merger running", {{"interval_ms", cfg.merge_interval_ms},
                                {"fold_delay_ms", cfg.merge_fold_delay_ms},
                                {"nice", priority.computing() - priority.own()}});
    if (cfg.merge_nice > 0 && !priority.usable())
        log_warn("merger keeps its priority: it could not take it back after lowering it "
                 "(raise RLIMIT_NICE, e.g. systemd's LimitNICE=, or set merge_nice = 0)",
                 {{"merge_nice", cfg.merge_nice}});
    Merger m(cfg, priority);
    for (;;) {
        bool more = false;
        try {
            more = m.pass();
        } catch (const std::exception& e) {
            // a database outage or a malformed segment: tried again on the next pass
            log_warn("merge pass failed", {{"error", e.what()}});
            m.forget_store();
        }
        // A backlog (sustained API writes) is worked off pass after pass; each step is still
        // its own short transactions, so writers go on between them.
        if (!more) sleep_ms(cfg.merge_interval_ms);
    }
}

}  // namespace notesd
