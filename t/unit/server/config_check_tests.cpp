#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "base/config.hpp"
#include "base/config_fixture.hpp"
#include "server/config_check.hpp"

using namespace notesd;
using namespace notesd::test;

BOOST_AUTO_TEST_SUITE(config_check)

BOOST_AUTO_TEST_CASE(defaults_plus_secret_are_valid) {
    BOOST_TEST(check_config(valid()).empty());
}

BOOST_AUTO_TEST_CASE(listen_and_db_are_checked_by_their_parsers) {
    expect_one_problem_each({
        {"listen", "", "listen must not be empty"},
        {"listen", "127.0.0.1:0", "listen:"},
        {"listen", "host:99999", "listen:"},
        {"listen", "::1:9000", "[address]:port"},
        {"listen", "unix:", "listen:"},
        {"db", "", "db must be a connection string"},
        {"db", "oracle://x", "db: unknown database scheme 'oracle'"},
        // what only the store's parser knows (config.cpp once kept a list of schemes of its own)
        {"db", "sqlite3://db=/tmp/x.db cache_mb=-1", "db: cache_mb must be 0-65536"},
        {"db", "sqlite3://db=/tmp/x.db synchronous=sometimes", "db: synchronous must be"},
        {"db", "sqlite3://db=/tmp/x.db colour=blue", "db: unknown SQLite connection option: colour"},
        {"db", "mysql://db=x user='y", "db: unterminated quote"},
        {"db", "postgresql://dbname=x timeout=soon", "db: connection string timeout"},
    }, [](const Config& c) { return check_config(c); });
    Config long_path = valid();
    long_path.listen = "/tmp/" + std::string(110, 'a') + ".sock";
    BOOST_TEST(has_problem(check_config(long_path), "longer than 107 bytes"));
    for (const char* ok : {"/run/notesd.sock", "unix:/tmp/n.sock", "127.0.0.1:9000", ":9000",
                           "9000", "[::1]:9000", "localhost:65535"}) {
        Config c = valid();
        c.listen = ok;
        BOOST_TEST(check_config(c).empty(), "listen=" << ok);
    }
    for (const char* ok : {"sqlite3://db=/tmp/x.db", "sqlite://db=/tmp/x.db cache_mb=0", "/tmp/x.db",
                           "mysql://db=x user=y", "postgresql://dbname=x host=/run/postgresql"}) {
        Config c = valid();
        c.db = ok;
        c.db_connect_timeout_s = 1;
        BOOST_TEST(check_config(c).empty(), "db=" << ok);
    }
}

BOOST_AUTO_TEST_CASE(connect_timeout_must_stay_below_the_deadline_on_a_server) {
    Config c = valid();
    c.request_timeout_ms = 3000;
    c.db_busy_timeout_ms = 100;
    c.db_connect_timeout_s = 3;
    c.db = "mysql://db=x user=y";
    BOOST_TEST(has_problem(check_config(c), "db_connect_timeout_s (3 s) must be less than"));
    c.db = "postgres://dbname=x";
    BOOST_TEST(check_config(c).size() == 1u);
    // SQLite has no connect step, whichever way the string names it
    for (const char* sqlite : {"sqlite3://db=/tmp/x.db", "sqlite://db=/tmp/x.db", "/tmp/x.db"}) {
        c.db = sqlite;
        BOOST_TEST(check_config(c).empty(), sqlite);
    }
}

BOOST_AUTO_TEST_CASE(every_layer_reports_together) {
    Config c;  // no secret
    c.workers = 0;
    c.max_requests = 0;
    c.listen.clear();
    c.db = "oracle://x";
    BOOST_TEST(check_config(c).size() == 5u);
}

BOOST_AUTO_TEST_SUITE_END()
