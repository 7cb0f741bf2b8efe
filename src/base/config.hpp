// Typed configuration: one file of `key = value` lines plus command-line overrides.
#pragma once
#include <string>
#include <vector>

namespace notesd {

struct Config {
    // transport and process model
    std::string listen = "/run/notesd/notesd.sock";  // unix socket path, or host:port / :port
    int listen_mode = 0660;            // permission bits of a unix socket (octal in the file)
    int listen_backlog = 1024;
    int workers = 4;                   // fixed pool size
    int max_requests = 100000;         // a worker exits and is replaced after this many requests
    int request_timeout_ms = 10000;    // per-request deadline; stays below nginx's read timeout
    int io_timeout_ms = 5000;          // each read of a request's params/body, write of its answer
    int slow_request_ms = 2000;        // requests at least this long are logged with phases; 0 off
    std::string status_listen = "auto";  // the master's status socket; "auto": next to listen
    int stop_timeout_ms = 10000;       // SIGTERM -> wait -> SIGKILL
    int respawn_backoff_max_ms = 5000; // back-off ceiling between respawns of a crashing slot
    int crash_loop_limit = 10;         // abnormal exits within crash_loop_window_s pause respawning
    int crash_loop_window_s = 60;
    std::string pid_file;              // empty: none
    // storage
    std::string db = "sqlite3://db=/var/lib/notesd/notes.db";
    int db_busy_timeout_ms = 3000;     // SQLite busy timeout / statement timeout on servers
    int db_connect_timeout_s = 5;
    // the background merger of the search index (server/merger.hpp)
    int merge_interval_ms = 1000;      // pause between its passes over the users; 0: no merger
    int merge_fold_delay_ms = 10000;   // postings rows this old are folded even when few
    int merge_nice = 19;               // added to its nice value while it computes (merger_priority.hpp)
    // security
    std::string secret;                // cursor/snapshot signing secret (>= 32 characters)
    std::string secret_file;           // or: a file whose content is the secret
    // API limits
    int max_body_bytes = 65536;
    int snapshot_ttl_s = 900;          // search snapshots live at least this long
    // logging
    std::string log_level = "info";    // debug, info, warn, error
    // where the config came from, for reload
    std::string path;
    // problems found while reading the file (syntax, unknown keys, bad values); validate() reports them
    std::vector<std::string> problems;
};

/// Reads `path` (key = value, '#' comments). Unknown keys and bad values are reported by
/// validate(), not thrown; throws std::runtime_error only when the file cannot be read.
Config load_config(const std::string& path);
/// Applies one "key=value" override (the same syntax as the file); returns a problem or "".
std::string apply_setting(Config& c, const std::string& key, const std::string& value);
/// Every problem with c that this layer can judge (ranges, the secret, including a secret_file
/// that cannot be read). `listen` and `db` are parsed by the layers that use them:
/// server/config_check.hpp's check_config() runs this and those parsers.
std::vector<std::string> validate(const Config& c);
/// The signing secret: `secret`, or the trimmed content of `secret_file`.
std::string effective_secret(const Config& c);

}  // namespace notesd
