// The status page (php-fpm's pm.status_path): what the master knows of its pool, read from the
// scoreboard, as JSON for notesctl and people, or as Prometheus text for scrapers.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "server/scoreboard.hpp"

namespace notesd {

struct StatusReport {
    std::string version;
    std::int64_t start_time_s = 0;       // Unix time the master started
    std::int64_t now_s = 0;
    int pool_size = 0;                   // configured workers
    int generation = 0;                  // bumped by every reload
    int idle = 0, busy = 0;              // live workers of every generation
    std::uint64_t accepted = 0;          // connections accepted by workers
    std::int64_t listen_queue = -1;      // connections waiting in the backlog; -1 unknown
    std::int64_t listen_queue_max = -1;  // the backlog's size; -1 unknown
    std::uint64_t input_failed = 0;
    std::uint64_t slow_requests = 0;
    int slow_request_ms = 0;
    int request_timeout_ms = 0;
    std::uint64_t restarts = 0;          // workers started to replace one that ended
    std::uint64_t crashes = 0;           // abnormal exits: a signal or an unexpected exit code
    std::uint64_t recycled = 0;          // exits after max_requests
    std::uint64_t deadline_exits = 0;    // workers that answered 503 at their own deadline
    std::uint64_t deadline_kills = 0;    // workers the master ended past request deadline + grace
    struct Endpoint {
        std::string name;
        std::uint64_t by_class[kStatusClasses] = {};
        std::uint64_t buckets[kLatencyBuckets] = {};  // per bucket, not cumulative
        std::uint64_t duration_us_sum = 0;
    };
    std::vector<Endpoint> endpoints;
    struct Worker {
        long long pid = 0;
        int generation = 0;
        std::string state;               // idle or busy
        std::string phase;
        std::string request_id, method, path;
        std::int64_t elapsed_ms = 0;     // of the running request
        std::uint64_t served = 0;
    };
    std::vector<Worker> workers;
};

/// The pool-wide counters (accepted, slow, input failures, per endpoint) from shared memory.
void read_pool_counters(const ScoreboardMemory& m, StatusReport& r);
/// One worker's row: idle, or busy with its phase, elapsed time and request (nullptr cell:
/// a worker that runs without one is shown idle).
StatusReport::Worker read_worker(pid_t pid, int generation, const WorkerCell* cell, std::int64_t now_ns);

/// {"pool": {...}, "requests": {...}, "workers": [...]} (README "Monitoring").
std::string render_status_json(const StatusReport& r);
/// Prometheus text format 0.0.4: notesd_* metrics with HELP and TYPE lines.
std::string render_status_prometheus(const StatusReport& r);

}  // namespace notesd
