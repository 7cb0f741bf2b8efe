#include "server/config_check.hpp"

#include <stdexcept>

#include "server/listener.hpp"
#include "store/dialect.hpp"

namespace notesd {

namespace {

void check_listen(const Config& c, std::vector<std::string>& out) {
    std::string error;
    if (c.listen.empty()) {
        out.push_back("listen must not be empty (a unix socket path, host:port or :port)");
    } else if (!parse_listen_address(c.listen, error)) {
        out.push_back("listen: " + error);
    }
    if (c.status_listen.empty()) {
        out.push_back("status_listen must not be empty (auto, off, a unix socket path or host:port)");
    } else if (c.status_listen != "auto" && c.status_listen != "off" &&
               !parse_listen_address(c.status_listen, error)) {
        out.push_back("status_listen: " + error);
    }
}

void check_db(const Config& c, std::vector<std::string>& out) {
    if (c.db.empty()) {
        out.push_back("db must be a connection string such as sqlite3://db=/path/notes.db");
        return;
    }
    DbTarget target;
    try {
        target = parse_connection_string(c.db);
    } catch (const std::invalid_argument& e) {
        out.push_back(std::string("db: ") + e.what());
        return;
    }
    // A worker opens its connection inside a request: a connect that may outlast the deadline
    // would end as the deadline's 503 instead of the store's. SQLite has no connect step.
    if (target.backend != Backend::Sqlite && c.db_connect_timeout_s * 1000 >= c.request_timeout_ms) {
        out.push_back("db_connect_timeout_s (" + std::to_string(c.db_connect_timeout_s) +
                      " s) must be less than request_timeout_ms (" +
                      std::to_string(c.request_timeout_ms) + " ms) for a database server");
    }
}

}  // namespace

std::vector<std::string> check_config(const Config& c) {
    std::vector<std::string> out = validate(c);
    check_listen(c, out);
    check_db(c, out);
    return out;
}

}  // namespace notesd
