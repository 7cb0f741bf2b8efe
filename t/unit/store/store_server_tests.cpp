// More of the `store` suite: what differs between database servers and SQLite — bytewise
// comparison of names, lock waits and killed connections. Runs against NOTESD_TEST_DB (a fresh
// SQLite file without it; the server-only cases then return at once).
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>

#include <soci/soci.h>

#include "api/errors.hpp"
#include "store/dialect.hpp"
#include "store/segments.hpp"
#include "store/soci_store.hpp"
#include "store/store.hpp"
#include "base/util.hpp"
#include "store_fixture.hpp"

using namespace notesd;
using notesd::test::plain_note;

namespace {

struct ServerFixture : notesd::test::StoreFixture {
    /// Ids of the other connections to this database (MySQL thread ids, PostgreSQL pids).
    std::set<long long> other_connections(soci::session& s) const {
        const std::string q =
            target.backend == Backend::MySql
                ? "SELECT CAST(ID AS SIGNED) FROM information_schema.PROCESSLIST WHERE "
                  "ID <> CONNECTION_ID() AND DB = DATABASE()"
                : "SELECT CAST(pid AS BIGINT) FROM pg_stat_activity WHERE "
                  "datname = current_database() AND pid <> pg_backend_pid()";
        std::set<long long> out;
        soci::rowset<long long> rs = s.prepare << q;
        for (long long id : rs) out.insert(id);
        return out;
    }
    void kill(soci::session& s, long long id) const {
        if (target.backend == Backend::MySql)
            s << "KILL CONNECTION " + std::to_string(id);
        else
            s << "SELECT pg_terminate_backend(CAST(" + std::to_string(id) + " AS INTEGER))";
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(store)

// Names compare byte by byte on every backend: no case folding, no trailing-space padding
// (MariaDB's utf8mb4_bin pads), no normalisation.
BOOST_FIXTURE_TEST_CASE(names_compare_bytewise, ServerFixture) {
    const std::string base = "Pad-" + new_uuid().substr(0, 8);
    const std::vector<std::string> names = {base, base + " ", "pad-" + base.substr(4),
                                            base + "-Stra\xC3\x9F" "e", base + "-STRASSE",
                                            base + "-\xC3\xA9", base + "-e\xCC\x81"};
    std::set<long long> ids;
    for (const std::string& n : names) ids.insert(store->add_user(n, 1));
    BOOST_CHECK_EQUAL(ids.size(), names.size());
    for (const std::string& n : names) {
        const auto u = store->find_user(n);
        BOOST_REQUIRE(u);
        BOOST_CHECK_EQUAL(u->name, n);
    }
    BOOST_CHECK(!store->find_user(base + "  "));
}

// A writer waiting for another connection's row lock longer than the busy timeout gets a
// StoreUnavailable quickly, and the same store works once the lock is gone.
BOOST_FIXTURE_TEST_CASE(lock_wait_is_unavailable, ServerFixture) {
    if (!server()) return;
    const long long u = store->add_user("lock-" + new_uuid().substr(0, 8), 1);
    auto waiter = open_store(conn, 1000);
    auto holder = raw();
    *holder << (target.backend == Backend::MySql ? "START TRANSACTION" : "BEGIN");
    *holder << "SELECT id FROM users WHERE id = " + std::to_string(u) + " FOR UPDATE";
    const auto t0 = std::chrono::steady_clock::now();
    NoteInput secret = plain_note("secret-title-value");
    try {
        waiter->write_batch(u, {}, {secret});
        BOOST_ERROR("write_batch succeeded without the lock");
    } catch (const StoreUnavailable& e) {
        // the lock wait or the statement's time limit, whichever the server checks first
        BOOST_CHECK_MESSAGE(e.fault() == StoreFault::Busy || e.fault() == StoreFault::Timeout,
                            e.what());
        const std::string msg = e.what();
        BOOST_CHECK(msg.find("secret-title-value") == std::string::npos);
        BOOST_CHECK(msg.find("SELECT") == std::string::npos);
        BOOST_TEST_MESSAGE("lock wait message: " << msg);
    }
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    BOOST_CHECK_LT(waited, 5.0);
    *holder << "ROLLBACK";
    BOOST_CHECK(waiter->write_batch(u, {}, {secret})[0] == WriteOutcome::Inserted);
    BOOST_CHECK_EQUAL(waiter->count_notes(u, {}), 1);
}

// A store whose connection was killed (a server restart, an idle timeout) runs a read again on
// a new connection, so the read succeeds; a write is never replayed: StoreUnavailable
// (connection_lost) once, then the store reconnects with freshly prepared statements.
BOOST_FIXTURE_TEST_CASE(killed_connection_reconnects, ServerFixture) {
    if (!server()) return;
    const long long u = store->add_user("kill-" + new_uuid().substr(0, 8), 1);
    const std::string hash = sha256_hex(new_uuid());
    store->add_token(u, hash, "p", "", 1, TokenScope::ReadWrite);
    auto admin = raw();
    const std::set<long long> before = other_connections(*admin);
    auto victim = open_store(conn);
    BOOST_REQUIRE(victim->find_token(hash));  // prepares the read statements
    BOOST_REQUIRE(victim->write_batch(u, {}, {plain_note("first")})[0] == WriteOutcome::Inserted);
    auto kill_victim = [&] {
        std::set<long long> mine;
        for (long long id : other_connections(*admin))
            if (!before.count(id)) mine.insert(id);
        BOOST_REQUIRE_EQUAL(mine.size(), 1u);
        kill(*admin, *mine.begin());
        // The kill is asynchronous on both servers: wait until the connection is gone.
        for (int i = 0; i < 50 && other_connections(*admin).count(*mine.begin()); ++i)
            usleep(20000);
    };

    kill_victim();
    const auto p = victim->find_token(hash);
    BOOST_REQUIRE(p);
    BOOST_CHECK_EQUAL(p->user_id, u);

    kill_victim();
    try {
        victim->write_batch(u, {}, {plain_note("second")});
        BOOST_ERROR("write_batch succeeded on a killed connection");
    } catch (const StoreUnavailable& e) {
        BOOST_CHECK_MESSAGE(e.fault() == StoreFault::ConnectionLost, e.what());
    }
    BOOST_CHECK_EQUAL(store->count_notes(u, {}), 1);  // the failed write did not happen
    BOOST_CHECK(victim->write_batch(u, {}, {plain_note("third")})[0] == WriteOutcome::Inserted);
    BOOST_CHECK_EQUAL(victim->list_notes(u, {}, OrderBy::UpdatedAt, std::nullopt, 10, false).size(),
                      2u);
}

// A server that cannot be reached at all is a StoreUnavailable (a 503), not an error.
BOOST_AUTO_TEST_CASE(unreachable_server_is_unavailable) {
    for (const char* conn : {"mysql://db=x user=x unix_socket=/nonexistent/notesd.sock",
                             "postgresql://dbname=x user=x host=/nonexistent port=1"}) {
        try {
            open_store(conn);
            BOOST_ERROR(conn << ": opened");
        } catch (const StoreUnavailable& e) {
            BOOST_CHECK_MESSAGE(e.fault() == StoreFault::ConnectionLost, e.what());
        }
    }
}


// A read view keeps the segment listing of its first read. Outside a snapshot (the servers)
// a segment another connection commits since must still be seen at once: term_postings
// renews the listing when the term's blocks show a segment it lacks, and postings_at lists
// anew. Shown to fail (1 != 2) with the renewal taken out of term_postings.
BOOST_FIXTURE_TEST_CASE(segment_view_sees_a_segment_committed_since, ServerFixture) {
    const long long u = user("segment-view");
    const std::unique_ptr<Dialect> dialect = make_dialect(target.backend);
    soci::session sa(dialect->factory(), target.soci_params), sb(dialect->factory(), target.soci_params);
    detail::Segments a(sa, *dialect, detail::make_segment_block_reader(target.backend, sa, *dialect));
    detail::Segments b(sb, *dialect, detail::make_segment_block_reader(target.backend, sb, *dialect));
    auto write = [&](long long updated) {
        sb << "BEGIN";
        b.begin_write(u);
        SegmentBuilder builder;
        builder.add(SegmentNote{updated, 1, updated, updated, 0, 1, 1}, {SegmentTerm{"word", 1, 0, "0"}});
        b.flush(u, builder);
        sb << "COMMIT";
    };
    auto postings = [&] {
        std::vector<TermPosting> got;
        a.term_postings(u, "word", SearchFilter{}, 10, true, nullptr, got);
        return got.size();
    };
    write(100);
    a.begin_view(false);
    BOOST_CHECK_EQUAL(postings(), 1u);
    write(200);
    BOOST_CHECK_EQUAL(postings(), 2u);
    write(300);
    std::vector<TermPosting> at;
    const std::vector<PostingNote> rest = a.postings_at(u, "word", {PostingNote{300, 1, 300}}, at);
    BOOST_CHECK(rest.empty());
    BOOST_REQUIRE_EQUAL(at.size(), 1u);
    BOOST_CHECK_EQUAL(at[0].updated_us, 300);
    a.end_view();
}

BOOST_AUTO_TEST_SUITE_END()
