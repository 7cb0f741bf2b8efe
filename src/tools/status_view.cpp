#include "tools/status_view.hpp"

#include <json/json.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "server/fcgi_records.hpp"
#include "server/listener.hpp"

namespace notesd {

namespace {

constexpr int kTimeoutMs = 5000;
// The endpoint column: the longest metrics name ("search_collections") and two blanks.
constexpr int kEndpointWidth = 20;

int connect_to(const std::string& address) {
    std::string error;
    const auto a = parse_listen_address(address, error);
    if (!a) throw std::runtime_error("status socket '" + address + "': " + error);
    if (a->is_unix) {
        const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un sa {};
        sa.sun_family = AF_UNIX;
        std::strncpy(sa.sun_path, a->path.c_str(), sizeof sa.sun_path - 1);
        if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) return fd;
        const int e = errno;
        if (fd >= 0) close(fd);
        throw std::runtime_error("cannot connect to " + a->path + ": " + std::strerror(e) +
                                 " (is notesd running? --socket names another status socket)");
    }
    addrinfo hints {};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    const std::string host = a->host.empty() ? "127.0.0.1" : a->host;
    if (getaddrinfo(host.c_str(), a->port.c_str(), &hints, &res) != 0)
        throw std::runtime_error("cannot resolve " + host);
    int fd = -1;
    for (auto* ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) throw std::runtime_error("cannot connect to " + address);
    return fd;
}

// The page's body (the CGI headers stripped).
std::string fetch(const std::string& address, const std::string& query) {
    const int fd = connect_to(address);
    const std::string req = encode_fastcgi_request(
        1, {{"REQUEST_METHOD", "GET"}, {"DOCUMENT_URI", "/notesd-status"}, {"QUERY_STRING", query}});
    FcgiResponseReader reader;
    bool ok = write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size());
    while (ok) {
        pollfd p {fd, POLLIN, 0};
        if (poll(&p, 1, kTimeoutMs) <= 0) break;
        char buf[8192];
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0) break;
        const auto st = reader.feed(buf, static_cast<std::size_t>(n));
        if (st != FcgiResponseReader::State::more) {
            ok = st == FcgiResponseReader::State::done;
            break;
        }
    }
    close(fd);
    const std::string& out = reader.stdout_text();
    const auto body = out.find("\r\n\r\n");
    if (body == std::string::npos) throw std::runtime_error("no answer from the status socket " + address);
    return out.substr(body + 4);
}

std::string ms(long long us) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(1) << static_cast<double>(us) / 1000.0;
    return s.str();
}

// An upper bound of the q-quantile from the cumulative buckets ("> 10000 ms" past the last).
std::string quantile(const Json::Value& latency, double q) {
    const double total = latency[latency.size() - 1]["count"].asDouble();
    if (total == 0) return "-";
    for (const auto& b : latency) {
        if (b["count"].asDouble() >= q * total)
            return b["le_us"].isNull() ? "> 10000" : "<= " + ms(b["le_us"].asInt64());
    }
    return "-";
}

void print_text(const Json::Value& s) {
    const Json::Value& pool = s["pool"];
    const Json::Value& req = s["requests"];
    const Json::Value& life = s["worker_lifecycle"];
    std::cout << "notesd " << s["version"].asString() << ", up " << s["uptime_s"].asInt64() << " s\n"
              << "pool:      " << pool["size"].asInt() << " workers (generation " << pool["generation"].asInt()
              << "), " << pool["busy"].asInt() << " busy, " << pool["idle"].asInt() << " idle\n"
              << "accepted:  " << pool["accepted_connections"].asUInt64() << " connections, listen queue "
              << (pool["listen_queue"].isNull() ? "unknown" : pool["listen_queue"].asString()) << " of "
              << (pool["listen_queue_max"].isNull() ? "unknown" : pool["listen_queue_max"].asString()) << "\n"
              << "requests:  " << req["total"].asUInt64() << " (slow: " << req["slow"].asUInt64()
              << " over " << req["slow_request_ms"].asInt() << " ms; deadline 503s: "
              << req["deadline_exits"].asUInt64() << "; ended by the master: " << req["deadline_kills"].asUInt64()
              << "; input failures: " << req["input_failed"].asUInt64() << ")\n"
              << "workers:   " << life["restarts"].asUInt64() << " restarts, " << life["crashes"].asUInt64()
              << " crashes, " << life["recycled"].asUInt64() << " recycled\n\n";
    std::cout << std::left << std::setw(kEndpointWidth) << "endpoint" << std::right << std::setw(9) << "total"
              << std::setw(8) << "2xx" << std::setw(8) << "4xx" << std::setw(8) << "5xx" << std::setw(11)
              << "mean ms" << std::setw(13) << "p50 ms" << std::setw(13) << "p99 ms" << "\n";
    for (const auto& e : req["by_endpoint"]) {
        const auto n = e["total"].asUInt64();
        std::cout << std::left << std::setw(kEndpointWidth) << e["endpoint"].asString() << std::right << std::setw(9) << n
                  << std::setw(8) << e["status"]["2xx"].asUInt64() << std::setw(8) << e["status"]["4xx"].asUInt64()
                  << std::setw(8) << e["status"]["5xx"].asUInt64() << std::setw(11)
                  << (n ? ms(static_cast<long long>(e["duration_us_sum"].asUInt64() / n)) : "-")
                  << std::setw(13) << quantile(e["latency"], 0.5) << std::setw(13) << quantile(e["latency"], 0.99)
                  << "\n";
    }
    std::cout << "\n" << std::left << std::setw(9) << "pid" << std::setw(6) << "gen" << std::setw(7) << "state"
              << std::setw(8) << "phase" << std::right << std::setw(10) << "served" << std::setw(12) << "elapsed ms"
              << "  request\n";
    for (const auto& w : s["workers"]) {
        std::cout << std::left << std::setw(9) << w["pid"].asInt64() << std::setw(6) << w["generation"].asInt()
                  << std::setw(7) << w["state"].asString() << std::setw(8) << w["phase"].asString() << std::right
                  << std::setw(10) << w["served"].asUInt64() << std::setw(12)
                  << (w.isMember("elapsed_ms") ? w["elapsed_ms"].asString() : "-") << "  "
                  << (w.isMember("method") ? w["method"].asString() + " " + w["path"].asString() + " " +
                                                 w["request_id"].asString()
                                           : "")
                  << "\n";
    }
}

}  // namespace

int print_status(const std::string& address, const std::string& format) {
    if (format == "prometheus") {
        std::cout << fetch(address, "format=prometheus");
        return 0;
    }
    const std::string body = fetch(address, "");
    if (format == "json") {
        std::cout << body;
        return 0;
    }
    Json::Value doc;
    Json::CharReaderBuilder b;
    std::string errors;
    std::istringstream in(body);
    if (!Json::parseFromStream(b, in, &doc, &errors) || !doc.isObject())
        throw std::runtime_error("the status page is not JSON: " + errors);
    print_text(doc);
    return 0;
}

}  // namespace notesd
