#include "base/config.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "base/log.hpp"

namespace notesd {

namespace {

enum class Kind { integer, octal, text, level };

struct KeyDef {
    const char* name;
    Kind kind;
    int Config::*int_field;
    std::string Config::*text_field;
};

// Every key the file and --set accept; `path` and `problems` are bookkeeping, not settings.
const KeyDef kKeys[] = {
    {"listen", Kind::text, nullptr, &Config::listen},
    {"listen_mode", Kind::octal, &Config::listen_mode, nullptr},
    {"listen_backlog", Kind::integer, &Config::listen_backlog, nullptr},
    {"workers", Kind::integer, &Config::workers, nullptr},
    {"max_requests", Kind::integer, &Config::max_requests, nullptr},
    {"request_timeout_ms", Kind::integer, &Config::request_timeout_ms, nullptr},
    {"io_timeout_ms", Kind::integer, &Config::io_timeout_ms, nullptr},
    {"slow_request_ms", Kind::integer, &Config::slow_request_ms, nullptr},
    {"status_listen", Kind::text, nullptr, &Config::status_listen},
    {"stop_timeout_ms", Kind::integer, &Config::stop_timeout_ms, nullptr},
    {"respawn_backoff_max_ms", Kind::integer, &Config::respawn_backoff_max_ms, nullptr},
    {"crash_loop_limit", Kind::integer, &Config::crash_loop_limit, nullptr},
    {"crash_loop_window_s", Kind::integer, &Config::crash_loop_window_s, nullptr},
    {"pid_file", Kind::text, nullptr, &Config::pid_file},
    {"db", Kind::text, nullptr, &Config::db},
    {"db_busy_timeout_ms", Kind::integer, &Config::db_busy_timeout_ms, nullptr},
    {"db_connect_timeout_s", Kind::integer, &Config::db_connect_timeout_s, nullptr},
    {"secret", Kind::text, nullptr, &Config::secret},
    {"secret_file", Kind::text, nullptr, &Config::secret_file},
    {"max_body_bytes", Kind::integer, &Config::max_body_bytes, nullptr},
    {"snapshot_ttl_s", Kind::integer, &Config::snapshot_ttl_s, nullptr},
    {"log_level", Kind::level, nullptr, &Config::log_level},
    {"merge_interval_ms", Kind::integer, &Config::merge_interval_ms, nullptr},
    {"merge_fold_delay_ms", Kind::integer, &Config::merge_fold_delay_ms, nullptr},
    {"merge_nice", Kind::integer, &Config::merge_nice, nullptr},
};

std::string trim(const std::string& s) {
    const char* ws = " \t\r\n\f\v";
    const auto b = s.find_first_not_of(ws);
    if (b == std::string::npos) return {};
    const auto e = s.find_last_not_of(ws);
    return s.substr(b, e - b + 1);
}

// Digits with an optional leading '-'; no spaces, no '+', no trailing text, no overflow.
bool parse_int(const std::string& v, int base, int& out) {
    if (v.empty()) return false;
    std::size_t i = (v[0] == '-') ? 1 : 0;
    if (i == v.size()) return false;
    for (std::size_t j = i; j < v.size(); ++j) {
        const char c = v[j];
        if (c < '0' || c > (base == 8 ? '7' : '9')) return false;
    }
    errno = 0;
    char* end = nullptr;
    const long long n = std::strtoll(v.c_str(), &end, base);
    if (errno == ERANGE || n < INT_MIN || n > INT_MAX) return false;
    out = static_cast<int>(n);
    return true;
}

const KeyDef* find_key(const std::string& key) {
    for (const auto& k : kKeys) {
        if (key == k.name) return &k;
    }
    return nullptr;
}

void check_range(std::vector<std::string>& out, const char* name, int v, long long lo,
                 long long hi) {
    if (v < lo || v > hi) {
        out.push_back(std::string(name) + " must be from " + std::to_string(lo) + " to " +
                      std::to_string(hi) + " (got " + std::to_string(v) + ")");
    }
}

void check_secret(const Config& c, std::vector<std::string>& out) {
    if (!c.secret.empty() && !c.secret_file.empty()) {
        out.push_back("set either secret or secret_file, not both");
        return;
    }
    if (c.secret.empty() && c.secret_file.empty()) {
        out.push_back("secret or secret_file is required (at least 32 characters; "
                      "for example: openssl rand -hex 32)");
        return;
    }
    std::string s;
    try {
        s = effective_secret(c);
    } catch (const std::exception& e) {
        out.push_back(e.what());
        return;
    }
    if (s.size() < 32) {
        out.push_back(std::string(c.secret.empty() ? "the content of secret_file" : "secret") +
                      " must be at least 32 characters (got " + std::to_string(s.size()) + ")");
    }
}

}  // namespace

std::string apply_setting(Config& c, const std::string& key_in, const std::string& value_in) {
    const std::string key = trim(key_in);
    const std::string value = trim(value_in);
    const KeyDef* k = find_key(key);
    if (!k) return "unknown key '" + key + "'";
    switch (k->kind) {
    case Kind::integer:
        if (!parse_int(value, 10, c.*(k->int_field)))
            return key + " must be a whole number (got '" + value + "')";
        break;
    case Kind::octal:
        if (value.empty() || value[0] == '-' || !parse_int(value, 8, c.*(k->int_field)))
            return key + " must be an octal permission such as 0660 (got '" + value + "')";
        break;
    case Kind::level: {
        LogLevel l;
        if (!parse_log_level(value, l))
            return key + " must be one of debug, info, warn, error (got '" + value + "')";
        c.*(k->text_field) = value;
        break;
    }
    case Kind::text:
        c.*(k->text_field) = value;
        break;
    }
    return {};
}

Config load_config(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read config file " + path);
    Config c;
    c.path = path;
    std::map<std::string, int> seen;
    std::string raw;
    int lineno = 0;
    while (std::getline(in, raw)) {
        ++lineno;
        const std::string line = trim(raw);
        // Only whole-line comments: a '#' inside a value (a secret, a path) stays part of it.
        if (line.empty() || line[0] == '#') continue;
        const std::string where = path + ":" + std::to_string(lineno) + ": ";
        const auto eq = line.find('=');
        if (eq == std::string::npos) {
            c.problems.push_back(where + "expected 'key = value'");
            continue;
        }
        const std::string key = trim(line.substr(0, eq));
        const auto prev = seen.find(key);
        if (prev != seen.end()) {
            c.problems.push_back(where + "'" + key + "' is already set on line " +
                                 std::to_string(prev->second));
            continue;
        }
        seen.emplace(key, lineno);
        const std::string problem = apply_setting(c, key, line.substr(eq + 1));
        if (!problem.empty()) c.problems.push_back(where + problem);
    }
    if (in.bad()) throw std::runtime_error("cannot read config file " + path);
    return c;
}

std::vector<std::string> validate(const Config& c) {
    std::vector<std::string> out = c.problems;
    check_range(out, "listen_mode", c.listen_mode, 0, 0777);
    check_range(out, "listen_backlog", c.listen_backlog, 1, 65535);
    check_range(out, "workers", c.workers, 1, 256);
    check_range(out, "max_requests", c.max_requests, 1, INT_MAX);
    check_range(out, "request_timeout_ms", c.request_timeout_ms, 100, 600000);
    check_range(out, "io_timeout_ms", c.io_timeout_ms, 100, 600000);
    check_range(out, "slow_request_ms", c.slow_request_ms, 0, 600000);
    check_range(out, "stop_timeout_ms", c.stop_timeout_ms, 0, 600000);
    check_range(out, "respawn_backoff_max_ms", c.respawn_backoff_max_ms, 100, 600000);
    check_range(out, "crash_loop_limit", c.crash_loop_limit, 1, 10000);
    check_range(out, "crash_loop_window_s", c.crash_loop_window_s, 1, 86400);
    check_range(out, "db_busy_timeout_ms", c.db_busy_timeout_ms, 0, 600000);
    if (c.db_busy_timeout_ms >= c.request_timeout_ms) {
        out.push_back("db_busy_timeout_ms (" + std::to_string(c.db_busy_timeout_ms) +
                      ") must be less than request_timeout_ms (" +
                      std::to_string(c.request_timeout_ms) + ")");
    }
    check_range(out, "db_connect_timeout_s", c.db_connect_timeout_s, 1, 300);
    check_range(out, "merge_interval_ms", c.merge_interval_ms, 0, 3600000);
    check_range(out, "merge_fold_delay_ms", c.merge_fold_delay_ms, 0, 86400000);
    check_range(out, "merge_nice", c.merge_nice, 0, 19);
    check_secret(c, out);
    check_range(out, "max_body_bytes", c.max_body_bytes, 1, 64 * 1024 * 1024);
    check_range(out, "snapshot_ttl_s", c.snapshot_ttl_s, 900, 7 * 86400);  // contract: at least 15 minutes
    LogLevel l;
    if (!parse_log_level(c.log_level, l))
        out.push_back("log_level must be one of debug, info, warn, error");
    return out;
}

std::string effective_secret(const Config& c) {
    if (!c.secret.empty()) return c.secret;
    if (c.secret_file.empty()) return {};
    std::ifstream in(c.secret_file, std::ios::binary);
    if (!in) throw std::runtime_error("secret_file " + c.secret_file + " cannot be read");
    std::ostringstream ss;
    ss << in.rdbuf();
    return trim(ss.str());
}

}  // namespace notesd
