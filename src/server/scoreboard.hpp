// The scoreboard (php-fpm's): shared memory the master maps before it forks any worker. Each
// worker owns one cell where it marks the request it serves (start, phase, deadline, request
// id); every worker adds its finished requests to shared counters (per endpoint: status class,
// latency histogram). The master reads it to end workers past their deadline and to answer the
// status page. Only relaxed atomics on the request path: no lock, no system call.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace notesd {

constexpr int kScoreboardCells = 1024;   // workers of every generation still alive (<= 256 each)
constexpr int kMaxEndpoints = 32;        // metric rows: 0 = "other" (no route), 1 + endpoint_index
constexpr int kStatusClasses = 5;        // 1xx .. 5xx
/// Upper bounds of the latency histogram's buckets in microseconds; one more bucket is +Inf.
constexpr std::int64_t kLatencyBoundsUs[] = {1000,   2500,   5000,    10000,   25000,
                                             50000,  100000, 250000,  500000,  1000000,
                                             2500000, 5000000, 10000000};
constexpr int kLatencyBuckets = static_cast<int>(sizeof kLatencyBoundsUs / sizeof kLatencyBoundsUs[0]) + 1;

/// One worker's cell. The worker writes, the master reads (and clears it when the worker ends).
struct alignas(64) WorkerCell {
    std::atomic<std::int32_t> pid;
    std::atomic<std::uint32_t> phase;        // Phase (base/phase_clock.hpp); idle between requests
    std::atomic<std::int64_t> started_ns;    // CLOCK_MONOTONIC when the request's input began; 0 idle
    std::atomic<std::int64_t> deadline_ns;   // the master ends the worker past this (+ grace); 0 none
    std::atomic<std::uint64_t> served;       // requests this worker finished
    std::atomic<std::uint32_t> text_seq;     // odd while the texts below are being written
    char request_id[52];
    char method[12];
    char path[80];
};

struct EndpointCounters {
    std::atomic<std::uint64_t> by_class[kStatusClasses];
    std::atomic<std::uint64_t> buckets[kLatencyBuckets];  // per bucket, not cumulative
    std::atomic<std::uint64_t> duration_us_sum;
};

struct ScoreboardMemory {
    std::atomic<std::uint64_t> accepted;          // connections the workers accepted
    std::atomic<std::uint64_t> slow_requests;     // requests over slow_request_ms
    std::atomic<std::uint64_t> input_failed;      // connections dropped: input stalled past io_timeout_ms or broken
    alignas(64) EndpointCounters endpoints[kMaxEndpoints];
    WorkerCell cells[kScoreboardCells];
};

/// The mapping. Created by the master (MAP_SHARED | MAP_ANONYMOUS) and inherited by fork.
class Scoreboard {
public:
    /// Maps zeroed shared memory; throws std::runtime_error when mmap fails.
    static Scoreboard create();
    Scoreboard() = default;
    ScoreboardMemory& memory() const { return *mem_; }
    bool valid() const { return mem_ != nullptr; }
    /// Master: a free cell for a new worker (pid set), or -1 when every cell is taken.
    int claim(pid_t pid) const;
    /// Master: the worker of cell i has ended; the cell becomes free and idle.
    void release(int i) const;
    WorkerCell& cell(int i) const { return mem_->cells[i]; }

private:
    explicit Scoreboard(ScoreboardMemory* m) : mem_(m) {}
    ScoreboardMemory* mem_ = nullptr;
};

/// A copy of a cell's texts, consistent (retried while the worker rewrites them).
struct CellText {
    std::string request_id, method, path;
};
CellText read_cell_text(const WorkerCell& c);

/// The worker's side of its cell and of the shared counters.
class WorkerSeat {
public:
    WorkerSeat() = default;  // no scoreboard: every call is a no-op
    WorkerSeat(ScoreboardMemory* mem, WorkerCell* cell) : mem_(mem), cell_(cell) {}
    WorkerCell* cell() const { return cell_; }
    /// A connection may be coming: the input must arrive by deadline_ns.
    void reading(std::int64_t now_ns, std::int64_t deadline_ns);
    /// Between requests (also: no connection after all, another worker won the accept race).
    void idle();
    void accepted() const;
    void input_failed() const;
    /// The request is read: its texts, and the deadline of the handler.
    void serving(const std::string& request_id, const std::string& method,
                 const std::string& path, std::int64_t deadline_ns);
    /// The response is being written: it must be done by deadline_ns.
    void writing(std::int64_t deadline_ns);
    /// Counts the answered request (before the response is flushed, so a client that has its
    /// answer finds it counted). endpoint: endpoint_index, or -1 for none.
    void count(int endpoint, int status, std::int64_t duration_ns, bool slow) const;

private:
    ScoreboardMemory* mem_ = nullptr;
    WorkerCell* cell_ = nullptr;
};

/// Index of the latency bucket for a duration in microseconds.
int latency_bucket(std::int64_t us);

}  // namespace notesd
