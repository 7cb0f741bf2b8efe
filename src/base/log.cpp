#include "base/log.hpp"
#include "base/util.hpp"

#include <atomic>
#include <cerrno>
#include <ctime>
#include <unistd.h>

namespace notesd {

namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::info)};

const char* level_name(LogLevel l) {
    switch (l) {
    case LogLevel::debug: return "debug";
    case LogLevel::info: return "info";
    case LogLevel::warn: return "warn";
    case LogLevel::error: return "error";
    case LogLevel::alert: return "alert";
    }
    return "info";
}

// Values that would break `k=v` parsing (spaces, quotes, '=', control bytes) are quoted.
bool needs_quotes(std::string_view v) {
    if (v.empty()) return true;
    for (unsigned char c : v) {
        if (c <= ' ' || c == '"' || c == '=' || c == '\\' || c == 0x7f) return true;
    }
    return false;
}

void append_escaped(std::string& out, std::string_view v) {
    static const char kHex[] = "0123456789abcdef";
    out.push_back('"');
    for (unsigned char c : v) {
        if (c == '"' || c == '\\') {
            out.push_back('\\');
            out.push_back(static_cast<char>(c));
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c < 0x20 || c == 0x7f) {
            out += "\\x";
            out.push_back(kHex[c >> 4]);
            out.push_back(kHex[c & 15]);
        } else {
            out.push_back(static_cast<char>(c));
        }
    }
    out.push_back('"');
}

void put_digits(char* p, long long v, int width) {
    for (int i = width - 1; i >= 0; --i) {
        p[i] = static_cast<char>('0' + v % 10);
        v /= 10;
    }
}

}  // namespace

bool parse_log_level(std::string_view name, LogLevel& out) {
    if (name == "debug") out = LogLevel::debug;
    else if (name == "info") out = LogLevel::info;
    else if (name == "warn") out = LogLevel::warn;
    else if (name == "error") out = LogLevel::error;
    else return false;
    return true;
}

void set_log_level(LogLevel level) { g_level.store(static_cast<int>(level)); }

LogLevel log_level() { return static_cast<LogLevel>(g_level.load()); }

bool log_enabled(LogLevel level) {
    return level == LogLevel::alert || static_cast<int>(level) >= g_level.load();
}

std::size_t format_log_timestamp(char* buf, std::size_t n) {
    if (n < 24) return 0;
    struct timespec ts {};
    clock_gettime(CLOCK_REALTIME, &ts);
    const long long secs = ts.tv_sec;
    long long days = secs / 86400;
    long long rem = secs % 86400;
    if (rem < 0) {
        rem += 86400;
        --days;
    }
    long long y = 0;
    unsigned m = 0, d = 0;
    civil_from_days(days, y, m, d);
    put_digits(buf, y, 4);
    buf[4] = '-';
    put_digits(buf + 5, m, 2);
    buf[7] = '-';
    put_digits(buf + 8, d, 2);
    buf[10] = 'T';
    put_digits(buf + 11, rem / 3600, 2);
    buf[13] = ':';
    put_digits(buf + 14, (rem / 60) % 60, 2);
    buf[16] = ':';
    put_digits(buf + 17, rem % 60, 2);
    buf[19] = '.';
    put_digits(buf + 20, ts.tv_nsec / 1000000, 3);
    buf[23] = 'Z';
    return 24;
}

std::size_t format_log_int(char* buf, std::size_t n, long long v) {
    char tmp[24];
    std::size_t len = 0;
    const bool neg = v < 0;
    unsigned long long u = neg ? 0ULL - static_cast<unsigned long long>(v)
                               : static_cast<unsigned long long>(v);
    do {
        tmp[len++] = static_cast<char>('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (neg) tmp[len++] = '-';
    if (len > n) return 0;
    for (std::size_t i = 0; i < len; ++i) buf[i] = tmp[len - 1 - i];
    return len;
}

bool write_all_signal_safe(int fd, const char* data, std::size_t len) {
    while (len > 0) {
        const ssize_t w = ::write(fd, data, len);
        if (w < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        data += w;
        len -= static_cast<std::size_t>(w);
    }
    return true;
}

void append_log_field(std::string& out, std::string_view key, std::string_view value) {
    out.push_back(' ');
    out.append(key.data(), key.size());
    out.push_back('=');
    if (needs_quotes(value)) append_escaped(out, value);
    else out.append(value.data(), value.size());
}

std::string format_log_line(LogLevel level, std::string_view request_id, std::string_view msg,
                            std::initializer_list<LogField> fields) {
    std::string out;
    out.reserve(160);
    char ts[32];
    out += "ts=";
    out.append(ts, format_log_timestamp(ts, sizeof ts));
    out += " lvl=";
    out += level_name(level);
    out += " pid=";
    out += std::to_string(static_cast<long long>(::getpid()));
    append_log_field(out, "req", request_id.empty() ? std::string_view("-") : request_id);
    append_log_field(out, "msg", msg);
    for (const auto& f : fields) append_log_field(out, f.key, f.value);
    out.push_back('\n');
    return out;
}

void log_event(LogLevel level, std::string_view request_id, std::string_view msg,
               std::initializer_list<LogField> fields) {
    if (!log_enabled(level)) return;
    const int saved = errno;  // callers log between system calls and then inspect errno
    const std::string line = format_log_line(level, request_id, msg, fields);
    write_all_signal_safe(STDERR_FILENO, line.data(), line.size());
    errno = saved;
}

}  // namespace notesd
