#include "server/scoreboard.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>

#include "base/phase_clock.hpp"

namespace notesd {

namespace {

constexpr auto relaxed = std::memory_order_relaxed;

void copy_text(char* dst, std::size_t cap, const std::string& s) {
    const std::size_t n = s.size() < cap - 1 ? s.size() : cap - 1;
    std::memcpy(dst, s.data(), n);
    dst[n] = '\0';
}

std::string text_of(const char* src, std::size_t cap) {
    return std::string(src, strnlen(src, cap));
}

}  // namespace

Scoreboard Scoreboard::create() {
    void* p = mmap(nullptr, sizeof(ScoreboardMemory), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        throw std::runtime_error(std::string("cannot map the scoreboard: ") + std::strerror(errno));
    // Anonymous mappings are zero-filled; every atomic here is lock-free, so zero bytes are
    // zero values. The placement-new only starts the objects' lifetimes.
    static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "shared atomics must be lock-free");
    return Scoreboard(new (p) ScoreboardMemory);
}

int Scoreboard::claim(pid_t pid) const {
    for (int i = 0; i < kScoreboardCells; ++i) {
        WorkerCell& c = mem_->cells[i];
        if (c.pid.load(relaxed) == 0) {
            c.phase.store(static_cast<std::uint32_t>(Phase::idle), relaxed);
            c.started_ns.store(0, relaxed);
            c.deadline_ns.store(0, relaxed);
            c.served.store(0, relaxed);
            c.pid.store(pid, std::memory_order_release);
            return i;
        }
    }
    return -1;
}

void Scoreboard::release(int i) const {
    WorkerCell& c = mem_->cells[i];
    c.started_ns.store(0, relaxed);
    c.deadline_ns.store(0, relaxed);
    c.phase.store(static_cast<std::uint32_t>(Phase::idle), relaxed);
    c.pid.store(0, std::memory_order_release);
}

CellText read_cell_text(const WorkerCell& c) {
    CellText t;
    for (int attempt = 0; attempt < 4; ++attempt) {
        const std::uint32_t before = c.text_seq.load(std::memory_order_acquire);
        if (before & 1u) continue;
        t.request_id = text_of(c.request_id, sizeof c.request_id);
        t.method = text_of(c.method, sizeof c.method);
        t.path = text_of(c.path, sizeof c.path);
        std::atomic_thread_fence(std::memory_order_acquire);
        if (c.text_seq.load(relaxed) == before) return t;
    }
    return CellText{};  // being rewritten all along: a new request, nothing stuck to report
}

int latency_bucket(std::int64_t us) {
    int i = 0;
    while (i < kLatencyBuckets - 1 && us > kLatencyBoundsUs[i]) ++i;
    return i;
}

void WorkerSeat::reading(std::int64_t now_ns, std::int64_t deadline_ns) {
    if (!cell_) return;
    cell_->deadline_ns.store(deadline_ns, relaxed);
    cell_->started_ns.store(now_ns, relaxed);
}

void WorkerSeat::idle() {
    if (!cell_) return;
    cell_->started_ns.store(0, relaxed);
    cell_->deadline_ns.store(0, relaxed);
    cell_->phase.store(static_cast<std::uint32_t>(Phase::idle), relaxed);
}

void WorkerSeat::accepted() const {
    if (mem_) mem_->accepted.fetch_add(1, relaxed);
}

void WorkerSeat::input_failed() const {
    if (mem_) mem_->input_failed.fetch_add(1, relaxed);
}

void WorkerSeat::serving(const std::string& request_id, const std::string& method,
                         const std::string& path, std::int64_t deadline_ns) {
    if (!cell_) return;
    // A seqlock: readers retry while the count is odd or has changed under them.
    const std::uint32_t seq = cell_->text_seq.load(relaxed);
    cell_->text_seq.store(seq + 1, relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    copy_text(cell_->request_id, sizeof cell_->request_id, request_id);
    copy_text(cell_->method, sizeof cell_->method, method);
    copy_text(cell_->path, sizeof cell_->path, path);
    cell_->text_seq.store(seq + 2, std::memory_order_release);
    cell_->deadline_ns.store(deadline_ns, relaxed);
}

void WorkerSeat::writing(std::int64_t deadline_ns) {
    if (cell_) cell_->deadline_ns.store(deadline_ns, relaxed);
}

void WorkerSeat::count(int endpoint, int status, std::int64_t duration_ns, bool slow) const {
    if (!mem_) return;
    const int row = endpoint >= 0 && endpoint + 1 < kMaxEndpoints ? endpoint + 1 : 0;
    EndpointCounters& e = mem_->endpoints[row];
    const int cls = status >= 100 && status < 600 ? status / 100 - 1 : kStatusClasses - 1;
    const std::int64_t us = duration_ns / 1000;
    e.by_class[cls].fetch_add(1, relaxed);
    e.buckets[latency_bucket(us)].fetch_add(1, relaxed);
    e.duration_us_sum.fetch_add(static_cast<std::uint64_t>(us), relaxed);
    if (slow) mem_->slow_requests.fetch_add(1, relaxed);
    if (cell_) cell_->served.fetch_add(1, relaxed);
}

}  // namespace notesd
