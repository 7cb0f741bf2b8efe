#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/config.hpp"
#include "base/config_fixture.hpp"

using namespace notesd;
using namespace notesd::test;

namespace {

// A temporary file removed at scope end.
struct TempFile {
    explicit TempFile(const std::string& content) {
        char tmpl[] = "/tmp/notesd-config-test-XXXXXX";
        const int fd = mkstemp(tmpl);
        BOOST_REQUIRE(fd >= 0);
        close(fd);
        path = tmpl;
        std::ofstream(path) << content;
    }
    ~TempFile() { unlink(path.c_str()); }
    std::string path;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(config)

BOOST_AUTO_TEST_CASE(defaults_plus_secret_are_valid) {
    BOOST_TEST(validate(valid()).empty());
}

BOOST_AUTO_TEST_CASE(defaults_without_secret_report_only_the_secret) {
    const auto problems = validate(Config{});
    BOOST_REQUIRE_EQUAL(problems.size(), 1u);
    BOOST_TEST(has_problem(problems, "secret"));
}

BOOST_AUTO_TEST_CASE(reads_every_kind_of_value) {
    TempFile f("# comment\n"
               "\n"
               "   listen = 127.0.0.1:9000   \n"
               "listen_mode=0600\n"
               "workers = 8\n"
               "max_requests = 1\n"
               "request_timeout_ms = 2500\n"
               "db_busy_timeout_ms = 1000\n"
               "db = sqlite3://db=/tmp/x.db\n"
               "secret = " + kSecret + "#not-a-comment\n"
               "log_level = debug\n"
               "pid_file =\n");
    const Config c = load_config(f.path);
    BOOST_TEST(c.problems.empty());
    BOOST_TEST(c.path == f.path);
    BOOST_TEST(c.listen == "127.0.0.1:9000");
    BOOST_TEST(c.listen_mode == 0600);
    BOOST_TEST(c.workers == 8);
    BOOST_TEST(c.max_requests == 1);
    BOOST_TEST(c.request_timeout_ms == 2500);
    BOOST_TEST(c.db == "sqlite3://db=/tmp/x.db");
    BOOST_TEST(c.secret == kSecret + "#not-a-comment");
    BOOST_TEST(c.log_level == "debug");
    BOOST_TEST(c.pid_file.empty());
    BOOST_TEST(c.stop_timeout_ms == Config{}.stop_timeout_ms);  // untouched keys keep defaults
    BOOST_TEST(validate(c).empty());
}

BOOST_AUTO_TEST_CASE(reports_every_file_problem_with_its_line) {
    TempFile f("workers = lots\n"
               "no_such_key = 1\n"
               "just some words\n"
               "listen_mode = 0999\n"
               "max_requests = 5\n"
               "max_requests = 6\n"
               "log_level = chatty\n"
               "secret = " + kSecret + "\n");
    const Config c = load_config(f.path);
    const auto problems = validate(c);
    BOOST_TEST(problems.size() == 6u);
    BOOST_TEST(has_problem(problems, f.path + ":1: workers must be a whole number"));
    BOOST_TEST(has_problem(problems, f.path + ":2: unknown key 'no_such_key'"));
    BOOST_TEST(has_problem(problems, f.path + ":3: expected 'key = value'"));
    BOOST_TEST(has_problem(problems, f.path + ":4: listen_mode must be an octal"));
    BOOST_TEST(has_problem(problems, f.path + ":6: 'max_requests' is already set on line 5"));
    BOOST_TEST(has_problem(problems, f.path + ":7: log_level must be one of"));
    BOOST_TEST(c.workers == Config{}.workers);  // a bad value leaves the default in place
    BOOST_TEST(c.max_requests == 5);
}

BOOST_AUTO_TEST_CASE(missing_file_throws) {
    BOOST_CHECK_THROW(load_config("/nonexistent/notesd.conf"), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(integers_are_strict) {
    Config c;
    BOOST_TEST(apply_setting(c, "workers", "12") == "");
    BOOST_TEST(c.workers == 12);
    BOOST_TEST(apply_setting(c, " workers ", " 3 ") == "");  // surrounding blanks are trimmed
    BOOST_TEST(c.workers == 3);
    for (const char* bad : {"", "+4", "4x", "0x10", "1e3", "4 4", "99999999999", "-"}) {
        BOOST_TEST(apply_setting(c, "workers", bad) != "", "accepted '" << bad << "'");
        BOOST_TEST(c.workers == 3);
    }
    BOOST_TEST(apply_setting(c, "listen_mode", "660") == "");
    BOOST_TEST(c.listen_mode == 0660);
    BOOST_TEST(apply_setting(c, "listen_mode", "-0660") != "");
    BOOST_TEST(apply_setting(c, "listen_mode", "0678") != "");
    BOOST_TEST(apply_setting(c, "nope", "1") == "unknown key 'nope'");
    BOOST_TEST(apply_setting(c, "path", "/x") != "");  // bookkeeping, not a setting
}

BOOST_AUTO_TEST_CASE(ranges_are_checked) {
    expect_one_problem_each({
        {"workers", "0", "workers must be from 1 to 256"},
        {"workers", "257", "workers must be from 1 to 256"},
        {"max_requests", "0", "max_requests"},
        {"request_timeout_ms", "99", "request_timeout_ms"},
        {"request_timeout_ms", "600001", "request_timeout_ms"},
        {"db_busy_timeout_ms", "10000", "db_busy_timeout_ms (10000) must be less than"},
        {"listen_mode", "1777", "listen_mode"},
        {"listen_backlog", "0", "listen_backlog"},
        {"crash_loop_limit", "0", "crash_loop_limit"},
        {"crash_loop_window_s", "0", "crash_loop_window_s"},
        {"respawn_backoff_max_ms", "-1", "respawn_backoff_max_ms"},
        {"stop_timeout_ms", "-5", "stop_timeout_ms"},
        {"max_body_bytes", "0", "max_body_bytes"},
        {"db_connect_timeout_s", "0", "db_connect_timeout_s"},
        {"snapshot_ttl_s", "0", "snapshot_ttl_s"},
        {"merge_interval_ms", "-1", "merge_interval_ms"},
        {"merge_interval_ms", "3600001", "merge_interval_ms"},
        {"merge_fold_delay_ms", "-1", "merge_fold_delay_ms"},
        {"merge_nice", "-1", "merge_nice"},
        {"merge_nice", "20", "merge_nice"},
    }, [](const Config& c) { return validate(c); });
}

// listen and db are judged by server/config_check.cpp (t/unit/server/config_check_tests.cpp).
BOOST_AUTO_TEST_CASE(many_problems_are_reported_together) {
    Config c;  // no secret
    c.workers = 0;
    c.max_requests = 0;
    BOOST_TEST(validate(c).size() == 3u);
}

BOOST_AUTO_TEST_CASE(secret_file_is_read_and_trimmed) {
    TempFile f("  " + kSecret + "xyz\n\n");
    Config c;
    c.secret_file = f.path;
    BOOST_TEST(effective_secret(c) == kSecret + "xyz");
    BOOST_TEST(validate(c).empty());

    TempFile short_file("short\n");
    c.secret_file = short_file.path;
    BOOST_TEST(has_problem(validate(c), "secret_file must be at least 32 characters"));

    c.secret_file = "/nonexistent/secret";
    BOOST_TEST(has_problem(validate(c), "cannot be read"));
    BOOST_CHECK_THROW(effective_secret(c), std::runtime_error);

    c.secret_file = f.path;
    c.secret = kSecret;
    BOOST_TEST(has_problem(validate(c), "not both"));
    c.secret_file.clear();
    BOOST_TEST(effective_secret(c) == kSecret);
    c.secret = kSecret.substr(1);
    BOOST_TEST(has_problem(validate(c), "secret must be at least 32 characters (got 31)"));
}

// The shipped example documents every key with its default: it must parse cleanly and agree
// with the struct's defaults (only the secret, which has no default, is left empty).
BOOST_AUTO_TEST_CASE(example_file_lists_the_defaults) {
    std::vector<std::string> candidates;
    if (const char* srcdir = std::getenv("srcdir"))
        candidates.push_back(std::string(srcdir) + "/notesd.conf.example");
    const std::string here = __FILE__;  // <srcdir>/t/unit/config_tests.cpp
    const auto cut = here.rfind("t/unit/");
    if (cut != std::string::npos) candidates.push_back(here.substr(0, cut) + "notesd.conf.example");
    std::string path;
    for (const auto& c : candidates) {
        if (std::ifstream(c)) {
            path = c;
            break;
        }
    }
    BOOST_TEST_REQUIRE(!path.empty(), "notesd.conf.example not found");
    const Config c = load_config(path);
    const Config d;
    BOOST_TEST(c.problems.empty());
    BOOST_TEST(c.listen == d.listen);
    BOOST_TEST(c.listen_mode == d.listen_mode);
    BOOST_TEST(c.listen_backlog == d.listen_backlog);
    BOOST_TEST(c.workers == d.workers);
    BOOST_TEST(c.max_requests == d.max_requests);
    BOOST_TEST(c.request_timeout_ms == d.request_timeout_ms);
    BOOST_TEST(c.io_timeout_ms == d.io_timeout_ms);
    BOOST_TEST(c.slow_request_ms == d.slow_request_ms);
    BOOST_TEST(c.status_listen == d.status_listen);
    BOOST_TEST(c.stop_timeout_ms == d.stop_timeout_ms);
    BOOST_TEST(c.respawn_backoff_max_ms == d.respawn_backoff_max_ms);
    BOOST_TEST(c.crash_loop_limit == d.crash_loop_limit);
    BOOST_TEST(c.crash_loop_window_s == d.crash_loop_window_s);
    BOOST_TEST(c.pid_file == d.pid_file);
    BOOST_TEST(c.db == d.db);
    BOOST_TEST(c.db_busy_timeout_ms == d.db_busy_timeout_ms);
    BOOST_TEST(c.db_connect_timeout_s == d.db_connect_timeout_s);
    BOOST_TEST(c.secret == d.secret);
    BOOST_TEST(c.secret_file == d.secret_file);
    BOOST_TEST(c.max_body_bytes == d.max_body_bytes);
    BOOST_TEST(c.snapshot_ttl_s == d.snapshot_ttl_s);
    BOOST_TEST(c.log_level == d.log_level);
    BOOST_TEST(c.merge_interval_ms == d.merge_interval_ms);
    BOOST_TEST(c.merge_fold_delay_ms == d.merge_fold_delay_ms);
    BOOST_TEST(c.merge_nice == d.merge_nice);
    // Every key appears in the example: setting each one there must have been possible.
    std::ifstream in(path);
    std::string line;
    int keys = 0;
    while (std::getline(in, line)) {
        if (!line.empty() && line[0] != '#') ++keys;
    }
    BOOST_TEST(keys == 25);
}

BOOST_AUTO_TEST_SUITE_END()
