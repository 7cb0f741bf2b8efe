#include "server/status.hpp"

#include <cstdio>

#include "api/render.hpp"
#include "api/router.hpp"
#include "base/phase_clock.hpp"

namespace notesd {

namespace {

const char* const kClassNames[kStatusClasses] = {"1xx", "2xx", "3xx", "4xx", "5xx"};

// Every endpoint has a row of its own in the scoreboard (row 0 counts what no route took).
static_assert(kEndpointCount + 1 <= kMaxEndpoints, "the scoreboard needs a row per endpoint");

std::uint64_t total_of(const StatusReport::Endpoint& e) {
    std::uint64_t n = 0;
    for (auto c : e.by_class) n += c;
    return n;
}

// Seconds from microseconds, as Prometheus reads them ("0.0025", "10").
std::string seconds(std::uint64_t us) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.6f", static_cast<double>(us) / 1e6);
    std::string s = buf;
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s;
}

// Label values here are our own names and versions, but escape as the format requires.
std::string label(const std::string& v) {
    std::string out;
    for (char c : v) {
        if (c == '\\' || c == '"') out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out;
}

void metric_head(std::string& out, const char* name, const char* type, const char* help) {
    out += "# HELP ";
    out += name;
    out += ' ';
    out += help;
    out += "\n# TYPE ";
    out += name;
    out += ' ';
    out += type;
    out += '\n';
}

void sample(std::string& out, const std::string& name_and_labels, const std::string& value) {
    out += name_and_labels;
    out += ' ';
    out += value;
    out += '\n';
}

void single(std::string& out, const char* name, const char* type, const char* help,
            const std::string& value) {
    metric_head(out, name, type, help);
    sample(out, name, value);
}

}  // namespace

void read_pool_counters(const ScoreboardMemory& m, StatusReport& r) {
    constexpr auto relaxed = std::memory_order_relaxed;
    r.accepted = m.accepted.load(relaxed);
    r.slow_requests = m.slow_requests.load(relaxed);
    r.input_failed = m.input_failed.load(relaxed);
    for (int row = 0; row <= kEndpointCount && row < kMaxEndpoints; ++row) {
        StatusReport::Endpoint e;
        e.name = row == 0 ? "other" : endpoint_name(kAllEndpoints[row - 1]);
        const EndpointCounters& c = m.endpoints[row];
        for (int k = 0; k < kStatusClasses; ++k) e.by_class[k] = c.by_class[k].load(relaxed);
        for (int b = 0; b < kLatencyBuckets; ++b) e.buckets[b] = c.buckets[b].load(relaxed);
        e.duration_us_sum = c.duration_us_sum.load(relaxed);
        r.endpoints.push_back(std::move(e));
    }
}

StatusReport::Worker read_worker(pid_t pid, int generation, const WorkerCell* cell, std::int64_t now_ns) {
    constexpr auto relaxed = std::memory_order_relaxed;
    StatusReport::Worker out;
    out.pid = pid;
    out.generation = generation;
    out.state = "idle";
    out.phase = "idle";
    if (!cell) return out;
    const WorkerCell& c = *cell;
    const std::int64_t started = c.started_ns.load(relaxed);
    const auto phase = static_cast<Phase>(c.phase.load(relaxed));
    out.served = c.served.load(relaxed);
    // Waiting in its accept (read phase, nothing accepted yet) still counts as idle
    // for a moment; a worker reading a request's input is busy.
    if (started != 0 && phase != Phase::idle) {
        out.state = "busy";
        out.phase = phase_name(phase);
        out.elapsed_ms = (now_ns - started) / 1000000;
        if (phase != Phase::read) {
            const CellText t = read_cell_text(c);
            out.request_id = t.request_id;
            out.method = t.method;
            out.path = t.path;
        }
    }
    return out;
}

std::string render_status_json(const StatusReport& r) {
    JsonOut j;
    j.begin_object();
    j.key("version").str(r.version);
    j.key("start_time").num(r.start_time_s);
    j.key("uptime_s").num(r.now_s - r.start_time_s);
    j.key("pool").begin_object();
    j.key("size").num(r.pool_size);
    j.key("generation").num(r.generation);
    j.key("idle").num(r.idle);
    j.key("busy").num(r.busy);
    j.key("accepted_connections").num(static_cast<long long>(r.accepted));
    j.key("listen_queue");
    if (r.listen_queue >= 0) j.num(r.listen_queue); else j.null();
    j.key("listen_queue_max");
    if (r.listen_queue_max >= 0) j.num(r.listen_queue_max); else j.null();
    j.end_object();
    std::uint64_t total = 0;
    for (const auto& e : r.endpoints) total += total_of(e);
    j.key("requests").begin_object();
    j.key("total").num(static_cast<long long>(total));
    j.key("slow").num(static_cast<long long>(r.slow_requests));
    j.key("slow_request_ms").num(r.slow_request_ms);
    j.key("input_failed").num(static_cast<long long>(r.input_failed));
    j.key("request_timeout_ms").num(r.request_timeout_ms);
    j.key("deadline_exits").num(static_cast<long long>(r.deadline_exits));
    j.key("deadline_kills").num(static_cast<long long>(r.deadline_kills));
    j.key("by_endpoint").begin_array();
    for (const auto& e : r.endpoints) {
        j.begin_object();
        j.key("endpoint").str(e.name);
        j.key("total").num(static_cast<long long>(total_of(e)));
        j.key("status").begin_object();
        for (int c = 0; c < kStatusClasses; ++c) j.key(kClassNames[c]).num(static_cast<long long>(e.by_class[c]));
        j.end_object();
        j.key("duration_us_sum").num(static_cast<long long>(e.duration_us_sum));
        j.key("latency").begin_array();  // cumulative, as a histogram's buckets are
        std::uint64_t cumulative = 0;
        for (int b = 0; b < kLatencyBuckets; ++b) {
            cumulative += e.buckets[b];
            j.begin_object();
            j.key("le_us");
            if (b < kLatencyBuckets - 1) j.num(kLatencyBoundsUs[b]); else j.null();
            j.key("count").num(static_cast<long long>(cumulative));
            j.end_object();
        }
        j.end_array();
        j.end_object();
    }
    j.end_array();
    j.end_object();
    j.key("worker_lifecycle").begin_object();
    j.key("restarts").num(static_cast<long long>(r.restarts));
    j.key("crashes").num(static_cast<long long>(r.crashes));
    j.key("recycled").num(static_cast<long long>(r.recycled));
    j.end_object();
    j.key("workers").begin_array();
    for (const auto& w : r.workers) {
        j.begin_object();
        j.key("pid").num(w.pid);
        j.key("generation").num(w.generation);
        j.key("state").str(w.state);
        j.key("phase").str(w.phase);
        j.key("served").num(static_cast<long long>(w.served));
        if (w.state == "busy") {
            j.key("elapsed_ms").num(w.elapsed_ms);
            j.key("request_id").str(w.request_id);
            j.key("method").str(w.method);
            j.key("path").str(w.path);
        }
        j.end_object();
    }
    j.end_array();
    j.end_object();
    std::string out = j.take();
    out += '\n';
    return out;
}

std::string render_status_prometheus(const StatusReport& r) {
    std::string out;
    out.reserve(8192);
    metric_head(out, "notesd_build_info", "gauge", "The running version (always 1).");
    sample(out, "notesd_build_info{version=\"" + label(r.version) + "\"}", "1");
    single(out, "notesd_start_time_seconds", "gauge", "Unix time the master started.",
           std::to_string(r.start_time_s));
    single(out, "notesd_pool_size", "gauge", "Workers the pool is configured for.",
           std::to_string(r.pool_size));
    metric_head(out, "notesd_workers", "gauge", "Live workers by state (all generations).");
    sample(out, "notesd_workers{state=\"idle\"}", std::to_string(r.idle));
    sample(out, "notesd_workers{state=\"busy\"}", std::to_string(r.busy));
    single(out, "notesd_accepted_connections_total", "counter",
           "FastCGI connections the workers accepted.", std::to_string(r.accepted));
    if (r.listen_queue >= 0)
        single(out, "notesd_listen_queue", "gauge", "Connections waiting in the listen backlog.",
               std::to_string(r.listen_queue));
    if (r.listen_queue_max >= 0)
        single(out, "notesd_listen_queue_max", "gauge", "Size of the listen backlog.",
               std::to_string(r.listen_queue_max));
    metric_head(out, "notesd_requests_total", "counter",
                "Requests answered by the workers, by endpoint and status class.");
    for (const auto& e : r.endpoints)
        for (int c = 0; c < kStatusClasses; ++c)
            sample(out, "notesd_requests_total{endpoint=\"" + label(e.name) + "\",status=\"" +
                            kClassNames[c] + "\"}",
                   std::to_string(e.by_class[c]));
    metric_head(out, "notesd_request_duration_seconds", "histogram",
                "Time from the start of a request's input to its response, by endpoint.");
    for (const auto& e : r.endpoints) {
        const std::string ep = "endpoint=\"" + label(e.name) + "\"";
        std::uint64_t cumulative = 0;
        for (int b = 0; b < kLatencyBuckets; ++b) {
            cumulative += e.buckets[b];
            const std::string le = b < kLatencyBuckets - 1 ? seconds(kLatencyBoundsUs[b]) : "+Inf";
            sample(out, "notesd_request_duration_seconds_bucket{" + ep + ",le=\"" + le + "\"}",
                   std::to_string(cumulative));
        }
        sample(out, "notesd_request_duration_seconds_sum{" + ep + "}", seconds(e.duration_us_sum));
        sample(out, "notesd_request_duration_seconds_count{" + ep + "}", std::to_string(cumulative));
    }
    struct Counter {
        const char* name;
        const char* help;
        std::uint64_t value;
    };
    const Counter counters[] = {
        {"notesd_slow_requests_total", "Requests that took at least slow_request_ms (each logged with its phases).",
         r.slow_requests},
        {"notesd_input_failures_total",
         "Connections dropped because their FastCGI input stalled past io_timeout_ms or broke.", r.input_failed},
        {"notesd_request_deadline_exits_total",
         "Requests a worker answered with 503 at request_timeout_ms (the worker was replaced).", r.deadline_exits},
        {"notesd_request_deadline_kills_total",
         "Workers the master ended because a request ran past its deadline plus the grace.", r.deadline_kills},
        {"notesd_worker_restarts_total", "Workers started to replace one that ended (any reason).", r.restarts},
        {"notesd_worker_crashes_total",
         "Workers that ended abnormally (a signal not sent by the master, an unexpected exit code).", r.crashes},
        {"notesd_worker_recycles_total", "Workers that ended after max_requests.", r.recycled},
    };
    for (const Counter& c : counters) single(out, c.name, "counter", c.help, std::to_string(c.value));
    return out;
}

}  // namespace notesd
