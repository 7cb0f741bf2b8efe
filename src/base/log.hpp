// One-line key=value logger to stderr (journald): `ts=… lvl=… pid=… req=… msg=… k=v …`.
#pragma once
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

namespace notesd {

enum class LogLevel { debug = 0, info = 1, warn = 2, error = 3, alert = 4 };

/// A key and its already formatted value for one log line.
struct LogField {
    LogField(std::string_view k, std::string_view v) : key(k), value(v) {}
    LogField(std::string_view k, const std::string& v) : key(k), value(v) {}
    LogField(std::string_view k, const char* v) : key(k), value(v ? v : "") {}
    LogField(std::string_view k, long long v) : key(k), value(std::to_string(v)) {}
    LogField(std::string_view k, long v) : key(k), value(std::to_string(v)) {}
    LogField(std::string_view k, int v) : key(k), value(std::to_string(v)) {}
    LogField(std::string_view k, unsigned long v) : key(k), value(std::to_string(v)) {}
    std::string_view key;
    std::string value;
};

/// Parses debug|info|warn|error (the config's log_level); false on anything else.
bool parse_log_level(std::string_view name, LogLevel& out);
/// Lines below this level are dropped (alert is never dropped).
void set_log_level(LogLevel level);
LogLevel log_level();
/// True when a line at `level` would be written.
bool log_enabled(LogLevel level);

/// Formats one complete line (with trailing newline) without writing it.
std::string format_log_line(LogLevel level, std::string_view request_id, std::string_view msg,
                            std::initializer_list<LogField> fields);
/// Writes one line to stderr with a single write(2), so lines from workers never interleave.
void log_event(LogLevel level, std::string_view request_id, std::string_view msg,
               std::initializer_list<LogField> fields = {});

inline void log_debug(std::string_view msg, std::initializer_list<LogField> f = {}) {
    log_event(LogLevel::debug, {}, msg, f);
}
inline void log_info(std::string_view msg, std::initializer_list<LogField> f = {}) {
    log_event(LogLevel::info, {}, msg, f);
}
inline void log_warn(std::string_view msg, std::initializer_list<LogField> f = {}) {
    log_event(LogLevel::warn, {}, msg, f);
}
inline void log_error(std::string_view msg, std::initializer_list<LogField> f = {}) {
    log_event(LogLevel::error, {}, msg, f);
}
inline void log_alert(std::string_view msg, std::initializer_list<LogField> f = {}) {
    log_event(LogLevel::alert, {}, msg, f);
}

/// Appends `key=value` to out, quoting and escaping the value when needed.
void append_log_field(std::string& out, std::string_view key, std::string_view value);

/// Async-signal-safe: writes the current UTC time as RFC 3339 with milliseconds
/// ("2025-05-04T14:20:11.123Z", 24 bytes) into buf; returns the length, 0 if n is too small.
std::size_t format_log_timestamp(char* buf, std::size_t n);
/// Async-signal-safe: writes the decimal form of v into buf; returns the length.
std::size_t format_log_int(char* buf, std::size_t n, long long v);
/// Async-signal-safe: write(2) all of [data, data+len) to fd, retrying on EINTR and short writes.
bool write_all_signal_safe(int fd, const char* data, std::size_t len);

}  // namespace notesd
