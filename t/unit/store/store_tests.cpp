// The store suite, through the Store interface only. It runs against NOTESD_TEST_DB (a
// connection string) or a fresh SQLite file; every test makes its own users, so a shared server
// database with data from earlier runs is fine.
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <chrono>

#include <soci/soci.h>
#include <soci/sqlite3/soci-sqlite3.h>

#include "api/errors.hpp"
#include "store/dialect.hpp"
#include "store/migrations.hpp"
#include "store/segments.hpp"
#include "store/index_strategy.hpp"
#include "store/soci_store.hpp"
#include "store/store.hpp"
#include "base/util.hpp"
#include "store_fixture.hpp"

using namespace notesd;
using notesd::test::StoreFixture;

namespace {

NoteInput note(const std::string& id, long long created, long long updated,
               std::vector<std::string> colls = {}, int flags = 0) {
    NoteInput n;
    n.id = id;
    n.title = "title " + id.substr(0, 8);
    n.snippet = "snippet";
    n.content = "# title\n\nbody of " + id;
    n.created_us = created;
    n.updated_us = updated;
    n.flags = flags;
    n.collection_ids = std::move(colls);
    return n;
}

CollectionInput collection(const std::string& id, const std::string& title, long long t) {
    CollectionInput c;
    c.id = id;
    c.title = title;
    c.created_us = t;
    c.updated_us = t;
    return c;
}

std::vector<std::string> ids_of(const std::vector<NoteItem>& v) {
    std::vector<std::string> out;
    for (const auto& n : v) out.push_back(n.id);
    return out;
}

// Every page of a listing, `page` rows at a time, concatenated.
std::vector<NoteItem> walk(Store& s, long long user, const NoteFilter& f, OrderBy o, int page) {
    std::vector<NoteItem> all;
    std::optional<PageKey> after;
    for (int guard = 0; guard < 100000; ++guard) {
        auto rows = s.list_notes(user, f, o, after, page, false);
        for (auto& r : rows) all.push_back(r);
        if (static_cast<int>(rows.size()) < page) break;
        const NoteItem& last = rows.back();
        after = PageKey{o == OrderBy::UpdatedAt ? last.updated_us : last.created_us, last.id};
    }
    return all;
}

// The brute-force model of one user's notes.
struct Model {
    std::map<std::string, NoteInput> notes;
    std::vector<std::string> expect(const NoteFilter& f, OrderBy o) const {
        std::vector<const NoteInput*> v;
        for (const auto& kv : notes) {
            const NoteInput& n = kv.second;
            if (f.collection_id &&
                std::find(n.collection_ids.begin(), n.collection_ids.end(), *f.collection_id) ==
                    n.collection_ids.end())
                continue;
            if (n.created_us < f.created.min_us || n.created_us > f.created.max_us) continue;
            if (n.updated_us < f.updated.min_us || n.updated_us > f.updated.max_us) continue;
            if (f.flags_any && !(n.flags & f.flags_any)) continue;
            v.push_back(&n);
        }
        std::sort(v.begin(), v.end(), [o](const NoteInput* a, const NoteInput* b) {
            const long long ka = o == OrderBy::UpdatedAt ? a->updated_us : a->created_us;
            const long long kb = o == OrderBy::UpdatedAt ? b->updated_us : b->created_us;
            return ka != kb ? ka > kb : a->id > b->id;
        });
        std::vector<std::string> out;
        for (auto* n : v) out.push_back(n->id);
        return out;
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(store)

BOOST_AUTO_TEST_CASE(split_sql_and_migrations_table) {
    const auto st = split_sql("-- c; x\nCREATE TABLE a (x TEXT DEFAULT 'a;\n');\n"
                              "INSERT INTO a VALUES ('it''s'); -- done; really\n/* ;\n */\nSELECT 1");
    BOOST_REQUIRE_EQUAL(st.size(), 3u);
    BOOST_CHECK_EQUAL(st[0], "CREATE TABLE a (x TEXT DEFAULT 'a;\n')");
    BOOST_CHECK_EQUAL(st[1], "INSERT INTO a VALUES ('it''s')");
    BOOST_CHECK_EQUAL(st[2], "SELECT 1");
    BOOST_CHECK_EQUAL(split_sql("CREATE TRIGGER t BEGIN UPDATE a SET x = 1; END;\n").size(), 1u);
    const auto ms = migrations_for("sqlite");
    BOOST_REQUIRE(!ms.empty());
    BOOST_CHECK_EQUAL(ms.front().version, 1);
    for (std::size_t i = 1; i < ms.size(); ++i) BOOST_CHECK_LT(ms[i - 1].version, ms[i].version);
}

BOOST_AUTO_TEST_CASE(connection_strings) {
    auto t = parse_connection_string("sqlite3://db=/x/n.db timeout=7");
    BOOST_CHECK(t.backend == Backend::Sqlite);
    BOOST_CHECK_EQUAL(t.soci_params, "db=\"/x/n.db\"");
    BOOST_CHECK_EQUAL(t.busy_timeout_ms, 7000);
    t = parse_connection_string("/var/lib/a b.db");
    BOOST_CHECK_EQUAL(t.soci_params, "db=\"/var/lib/a b.db\"");
    BOOST_CHECK_EQUAL(t.busy_timeout_ms, kDefaultBusyTimeoutMs);
    BOOST_CHECK(parse_connection_string("sqlite://db=x.db").backend == Backend::Sqlite);
    t = parse_connection_string("mysql://db=notes user=u timeout=2");
    BOOST_CHECK(t.backend == Backend::MySql);
    BOOST_CHECK_EQUAL(t.soci_params, "db=notes user=u charset=utf8mb4 connect_timeout=5");
    BOOST_CHECK_EQUAL(t.busy_timeout_ms, 2000);
    t = parse_connection_string("postgresql://dbname=notes host='/run/x y'");
    BOOST_CHECK(t.backend == Backend::PostgreSql);
    BOOST_CHECK_EQUAL(t.soci_params, "dbname=notes host='/run/x y' connect_timeout=5");
    t = parse_connection_string("postgres://dbname=n connect_timeout=2 timeout=0");
    BOOST_CHECK_EQUAL(t.soci_params, "dbname=n connect_timeout=2");
    BOOST_CHECK_EQUAL(t.busy_timeout_ms, 0);
    BOOST_CHECK_THROW(parse_connection_string("oracle://x"), std::invalid_argument);
    BOOST_CHECK_THROW(parse_connection_string("sqlite3://db=x timeout=abc"), std::invalid_argument);
    BOOST_CHECK_THROW(parse_connection_string("sqlite3://db=x bogus=1"), std::invalid_argument);
    BOOST_CHECK_EQUAL(parse_connection_string("sqlite3://db=x").sqlite_cache_mb, 0);
    BOOST_CHECK_EQUAL(parse_connection_string("sqlite3://db=x cache_mb=64").sqlite_cache_mb, 64);
    // set or not: open_store's defaults (256 MiB for workers, 512 for notesctl) yield to any value
    BOOST_CHECK(!parse_connection_string("sqlite3://db=x").sqlite_cache_set);
    BOOST_CHECK(parse_connection_string("sqlite3://db=x cache_mb=0").sqlite_cache_set);
    BOOST_CHECK_THROW(parse_connection_string("sqlite3://db=x cache_mb=-1"), std::invalid_argument);
    // synchronous: FULL (a 200 write survives a power cut) unless the string sets it
    BOOST_CHECK_EQUAL(parse_connection_string("sqlite3://db=x").sqlite_synchronous, "FULL");
    t = parse_connection_string("sqlite3://db=x synchronous=normal");
    BOOST_CHECK_EQUAL(t.sqlite_synchronous, "NORMAL");
    BOOST_CHECK_THROW(parse_connection_string("sqlite3://db=x synchronous=sometimes"),
                      std::invalid_argument);
    BOOST_CHECK_THROW(parse_connection_string("sqlite3://db=x cache_mb=70000"), std::invalid_argument);
    BOOST_CHECK_EQUAL(parse_connection_string("sqlite3://db=x mmap_mb=4096").sqlite_mmap_mb, 4096);
    BOOST_CHECK_EQUAL(parse_connection_string("sqlite3://db=x").sqlite_mmap_mb, 0);
    BOOST_CHECK_EQUAL(parse_connection_string("sqlite3://db=x mmap_mb=0").sqlite_mmap_mb, 0);
    BOOST_CHECK_THROW(parse_connection_string("sqlite3://db=x mmap_mb=x"), std::invalid_argument);
}

// A SQLite session with mmap_mb set maps the main file (within SQLite's own cap) but never the
// attached snapshots file, which every search rewrites; by default it maps neither. The snapshots
// file sits beside the main one, in memory for an in-memory database.
BOOST_FIXTURE_TEST_CASE(sqlite_session_maps_the_main_file_only, StoreFixture) {
    if (!sqlite()) return;
    BOOST_CHECK_EQUAL(sqlite_snapshots_file(parse_connection_string(conn)), dir + "/test.db-snapshots");
    BOOST_CHECK_EQUAL(sqlite_snapshots_file(parse_connection_string("sqlite3://db=:memory:")), ":memory:");
    const DbTarget t = parse_connection_string(conn);
    // the session setup SociStore runs: the dialect's, then its index strategy's, and the
    // snapshots file attached (at its first use, or before migrations as here)
    const std::unique_ptr<Dialect> dialect = make_dialect(Backend::Sqlite);
    auto setup = [&](soci::session& session, const DbTarget& target) {
        for (const std::string& st : dialect->session_setup(target)) session << st;
        detail::Segments segments(session, *dialect,
                                  detail::make_segment_block_reader(Backend::Sqlite, session, *dialect));
        auto index = detail::make_index_strategy(Backend::Sqlite, session, *dialect, segments, nullptr);
        for (const std::string& st : index->session_setup(target)) session << st;
        index->before_migration();
    };
    DbTarget on = t;
    on.sqlite_mmap_mb = 2048;
    soci::session s(dialect->factory(), on.soci_params);
    setup(s, on);
    long long main_map = 0, snap_map = -1;
    s << "PRAGMA main.mmap_size", soci::into(main_map);
    s << "PRAGMA snap.mmap_size", soci::into(snap_map);
    BOOST_CHECK_GT(main_map, 0);
    BOOST_CHECK_LE(main_map, 2048LL * 1048576);
    BOOST_CHECK_EQUAL(snap_map, 0);
    soci::session o(dialect->factory(), t.soci_params);
    setup(o, t);
    o << "PRAGMA main.mmap_size", soci::into(main_map);
    BOOST_CHECK_EQUAL(main_map, 0);
}

// A segment written in a transaction that rolls back leaves nothing behind in the process:
// SQLite hands its id out again, and the segment another process commits under that id reads
// as itself here.
BOOST_FIXTURE_TEST_CASE(segment_id_of_a_rollback_reused, StoreFixture) {
    if (!sqlite()) return;  // the servers' ids are never handed out twice
    const long long u = user("segment-rollback");
    const std::unique_ptr<Dialect> dialect = make_dialect(Backend::Sqlite);
    soci::session sa(dialect->factory(), target.soci_params), sb(dialect->factory(), target.soci_params);
    detail::Segments a(sa, *dialect, detail::make_segment_block_reader(Backend::Sqlite, sa, *dialect));
    detail::Segments b(sb, *dialect, detail::make_segment_block_reader(Backend::Sqlite, sb, *dialect));
    auto write = [&](soci::session& s, detail::Segments& segs, long long updated,
                     const std::string& term, bool commit) {
        s << "BEGIN IMMEDIATE";
        segs.begin_write(u);
        SegmentBuilder builder;
        builder.add(SegmentNote{updated, 1, 2, updated, 0, 1, 1}, {SegmentTerm{term, 1, 0, "0"}});
        segs.flush(u, builder);
        long long id = 0;
        s << "SELECT MAX(id) FROM index_segments", soci::into(id);
        s << (commit ? "COMMIT" : "ROLLBACK");
        return id;
    };
    const long long rolled_back = write(sa, a, 100, "first", false);
    BOOST_CHECK_EQUAL(write(sb, b, 200, "second", true), rolled_back);  // the id again
    const std::vector<detail::SegmentRef> list = a.of_user(u);
    BOOST_REQUIRE_EQUAL(list.size(), 1u);
    BOOST_REQUIRE_EQUAL(list[0].notes->size(), 1u);
    BOOST_CHECK_EQUAL((*list[0].notes)[0].updated_us, 200);
    std::vector<TermPosting> got;
    a.term_postings(u, "second", SearchFilter{}, 10, true, nullptr, got);
    BOOST_REQUIRE_EQUAL(got.size(), 1u);
    BOOST_CHECK_EQUAL(got[0].updated_us, 200);
}

BOOST_FIXTURE_TEST_CASE(migrate_twice, StoreFixture) {
    const int v = store->schema_version();
    BOOST_CHECK_GE(v, 1);
    const long long u = user("mig");
    store->migrate();
    BOOST_CHECK_EQUAL(store->schema_version(), v);
    BOOST_CHECK(store->find_user(std::to_string(u)).has_value());
}

BOOST_FIXTURE_TEST_CASE(users_and_tokens, StoreFixture) {
    const std::string name = "alice-" + new_uuid().substr(0, 8);
    const long long a = store->add_user(name, 42);
    BOOST_CHECK_THROW(store->add_user(name, 43), std::invalid_argument);
    auto by_name = store->find_user(name);
    BOOST_REQUIRE(by_name);
    BOOST_CHECK_EQUAL(by_name->id, a);
    BOOST_CHECK_EQUAL(by_name->created_us, 42);
    BOOST_CHECK_EQUAL(by_name->note_count, 0);
    auto by_id = store->find_user(std::to_string(a));
    BOOST_REQUIRE(by_id);
    BOOST_CHECK_EQUAL(by_id->name, name);
    BOOST_CHECK(!store->find_user("nobody-" + new_uuid()));
    const auto users = store->list_users();
    BOOST_CHECK(std::any_of(users.begin(), users.end(),
                            [&](const UserInfo& u) { return u.id == a && u.name == name; }));

    const std::string raw = base64url_encode(random_bytes(32));
    const std::string hash = sha256_hex(raw);
    BOOST_CHECK_THROW(store->add_token(a, raw, raw.substr(0, 8), "x", 1, TokenScope::ReadWrite), std::invalid_argument);
    const long long tid = store->add_token(a, hash, raw.substr(0, 8), "laptop", 50, TokenScope::ReadWrite);
    auto p = store->find_token(hash);
    BOOST_REQUIRE(p);
    BOOST_CHECK_EQUAL(p->user_id, a);
    BOOST_CHECK_EQUAL(p->token_id, tid);
    BOOST_CHECK(!store->find_token(sha256_hex(raw + "x")));
    auto toks = store->list_tokens(a);
    BOOST_REQUIRE_EQUAL(toks.size(), 1u);
    BOOST_CHECK_EQUAL(toks[0].label, "laptop");
    BOOST_CHECK_EQUAL(toks[0].prefix, raw.substr(0, 8));
    BOOST_CHECK(!toks[0].revoked_us);
    BOOST_CHECK(store->revoke_token(tid, 99));
    BOOST_CHECK(!store->find_token(hash));
    toks = store->list_tokens(a);
    BOOST_REQUIRE(toks[0].revoked_us);
    BOOST_CHECK_EQUAL(*toks[0].revoked_us, 99);
    BOOST_CHECK(store->revoke_token(tid, 100));  // revoking again: still exists, time kept
    BOOST_CHECK_EQUAL(*store->list_tokens(a)[0].revoked_us, 99);
    BOOST_CHECK(!store->revoke_token(tid + 1000000, 1));
    BOOST_CHECK_THROW(store->add_token(a + 1000000, sha256_hex("y"), "y", "", 1, TokenScope::ReadWrite),
                      std::invalid_argument);
}

BOOST_FIXTURE_TEST_CASE(write_outcomes, StoreFixture) {
    const long long u = user("w");
    const std::string c1 = new_uuid(), c2 = new_uuid(), n1 = new_uuid();
    NoteInput n = note(n1, 10, 20, {c1});
    n.attachments.push_back({new_uuid(), AttachmentKind::Audio, "a.mp3"});
    auto out = store->write_batch(u, {collection(c1, "one", 1), collection(c2, "two", 2)}, {n});
    BOOST_REQUIRE_EQUAL(out.size(), 1u);
    BOOST_CHECK(out[0] == WriteOutcome::Inserted);
    BOOST_CHECK(store->write_batch(u, {collection(c1, "one", 1)}, {n})[0] == WriteOutcome::Unchanged);
    NoteInput moved = n;
    moved.collection_ids = {c2};
    BOOST_CHECK(store->write_batch(u, {}, {moved})[0] == WriteOutcome::Updated);
    NoteInput att = moved;
    att.attachments[0].target = "b.mp3";
    BOOST_CHECK(store->write_batch(u, {}, {att})[0] == WriteOutcome::Updated);
    NoteInput text = att;
    text.content += "!";
    BOOST_CHECK(store->write_batch(u, {}, {text})[0] == WriteOutcome::Updated);
    BOOST_CHECK(store->write_batch(u, {}, {text})[0] == WriteOutcome::Unchanged);
    const auto rows = store->list_notes(u, {}, OrderBy::UpdatedAt, std::nullopt, 10, true);
    BOOST_REQUIRE_EQUAL(rows.size(), 1u);
    BOOST_CHECK_EQUAL(*rows[0].content, text.content);
    BOOST_CHECK(rows[0].collection_ids == std::vector<std::string>{c2});
    BOOST_CHECK(rows[0].audio_recording_ids ==
                std::vector<std::string>{text.attachments[0].id});
    // An unknown collection fails the whole batch, leaving nothing behind.
    const std::string n2 = new_uuid();
    BOOST_CHECK_THROW(store->write_batch(u, {}, {note(n2, 1, 1), note(new_uuid(), 1, 1, {new_uuid()})}),
                      std::invalid_argument);
    BOOST_CHECK_EQUAL(store->count_notes(u, {}), 1);
    BOOST_CHECK_THROW(store->write_batch(u, {}, {note("not-a-uuid", 1, 1)}), std::invalid_argument);
    // Upper-case input is stored canonical.
    std::string upper = new_uuid();
    std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
    store->write_batch(u, {}, {note(upper, 1, 1)});
    BOOST_CHECK_EQUAL(store->count_notes(u, {}), 2);
    BOOST_CHECK(store->delete_note(u, upper));
}

BOOST_FIXTURE_TEST_CASE(counts_stay_exact, StoreFixture) {
    const long long u = user("c");
    std::mt19937 rng(7);
    std::vector<std::string> colls;
    std::vector<CollectionInput> cin;
    for (int i = 0; i < 4; ++i) {
        colls.push_back(new_uuid());
        cin.push_back(collection(colls.back(), "c" + std::to_string(i), i));
    }
    store->write_batch(u, cin, {});
    Model m;
    std::vector<std::string> ids;
    for (int round = 0; round < 6; ++round) {
        std::vector<NoteInput> batch;
        for (int i = 0; i < 15; ++i) {
            const bool reuse = !ids.empty() && rng() % 3 == 0;
            const std::string id = reuse ? ids[rng() % ids.size()] : new_uuid();
            std::vector<std::string> nc;
            for (const auto& c : colls)
                if (rng() % 3 == 0) nc.push_back(c);
            NoteInput n = note(id, rng() % 50, rng() % 50, nc, static_cast<int>(rng() % 16));
            batch.push_back(n);
            m.notes[id] = n;
            if (!reuse) ids.push_back(id);
        }
        store->write_batch(u, {}, batch);
        for (int d = 0; d < 3 && !ids.empty(); ++d) {
            const std::size_t k = rng() % ids.size();
            BOOST_CHECK(store->delete_note(u, ids[k]));
            BOOST_CHECK(!store->delete_note(u, ids[k]));
            m.notes.erase(ids[k]);
            ids.erase(ids.begin() + static_cast<long>(k));
        }
        BOOST_CHECK_EQUAL(store->count_notes(u, {}), static_cast<long long>(m.notes.size()));
        BOOST_CHECK_EQUAL(store->find_user(std::to_string(u))->note_count,
                          static_cast<long long>(m.notes.size()));
        const auto listed = store->list_collections(u, {}, OrderBy::UpdatedAt, std::nullopt, 100);
        BOOST_REQUIRE_EQUAL(listed.size(), colls.size());
        for (const auto& c : listed) {
            NoteFilter f;
            f.collection_id = c.id;
            const long long brute = static_cast<long long>(m.expect(f, OrderBy::UpdatedAt).size());
            BOOST_CHECK_EQUAL(c.note_count, brute);
            BOOST_CHECK_EQUAL(store->count_notes(u, f), brute);
            f.flags_any = kFlagTasks;  // takes the COUNT(*) path
            BOOST_CHECK_EQUAL(store->count_notes(u, f),
                              static_cast<long long>(m.expect(f, OrderBy::UpdatedAt).size()));
        }
    }
    BOOST_CHECK_EQUAL(store->count_collections(u, {}), 4);
    BOOST_CHECK_EQUAL(store->find_user(std::to_string(u))->collection_count, 4);
}

BOOST_FIXTURE_TEST_CASE(order_filters_and_pages, StoreFixture) {
    const long long u = user("o");
    std::mt19937 rng(11);
    const std::vector<std::string> colls = {new_uuid(), new_uuid()};
    Model m;
    std::vector<NoteInput> batch;
    for (int i = 0; i < 60; ++i) {
        std::vector<std::string> nc;
        if (i % 2) nc.push_back(colls[0]);
        if (i % 3 == 0) nc.push_back(colls[1]);
        // few distinct times, so ties on the sort key are common
        NoteInput n = note(new_uuid(), 100 + rng() % 6, 200 + rng() % 6, nc,
                           static_cast<int>(rng() % 16));
        m.notes[n.id] = n;
        batch.push_back(n);
    }
    store->write_batch(u, {collection(colls[0], "a", 1), collection(colls[1], "b", 2)}, batch);

    std::vector<NoteFilter> filters(1);
    NoteFilter f;
    f.created = {101, 103};
    filters.push_back(f);
    f = {};
    f.updated = {202, 202};
    filters.push_back(f);
    f = {};
    f.flags_any = kFlagOpenTasks | kFlagFiles;
    filters.push_back(f);
    f = {};
    f.collection_id = colls[0];
    filters.push_back(f);
    f.flags_any = kFlagImages;
    f.updated = {201, kMaxTime};
    filters.push_back(f);
    f = {};
    f.collection_id = colls[1];
    f.created = {kMinTime, 104};
    f.updated = {200, 204};
    filters.push_back(f);
    for (const auto& flt : filters) {
        for (OrderBy o : {OrderBy::UpdatedAt, OrderBy::CreatedAt}) {
            const auto want = m.expect(flt, o);
            BOOST_CHECK_EQUAL(store->count_notes(u, flt), static_cast<long long>(want.size()));
            for (int page : {1, 4, 7, 100}) {
                const auto got = ids_of(walk(*store, u, flt, o, page));
                BOOST_CHECK(got == want);
                BOOST_CHECK_EQUAL(std::set<std::string>(got.begin(), got.end()).size(), got.size());
            }
        }
    }
    NoteFilter unknown;
    unknown.collection_id = new_uuid();
    BOOST_CHECK(store->list_notes(u, unknown, OrderBy::UpdatedAt, std::nullopt, 10, false).empty());
    BOOST_CHECK_EQUAL(store->count_notes(u, unknown), 0);
    const auto page = store->list_notes(u, {}, OrderBy::UpdatedAt, std::nullopt, 5, false);
    BOOST_REQUIRE_EQUAL(page.size(), 5u);
    BOOST_CHECK(!page[0].content);
}

// A list ordered by updated time within a created range reads one range of
// notes_by_created_bucket per 2^40 us bucket (schema 018) and merges them: the same rows in the
// same order as the brute-force model, through every page size, for ranges within one bucket,
// across buckets, open at either end, wider than the merge takes (read as before), with flags
// and updated bounds, and with a bucket full of ties on the updated time. The second user's
// notes share every bucket and never show.
BOOST_FIXTURE_TEST_CASE(created_ranges_ordered_by_update, StoreFixture) {
    const long long u = user("buckets"), other = user("buckets-other");
    const long long w = 1LL << 40, base = 1700000000000000LL - 1700000000000000LL % w;
    std::mt19937_64 rng(18);
    Model m;
    std::vector<NoteInput> mine, theirs;
    for (int i = 0; i < 400; ++i) {
        // 80 buckets; a note is updated soon after it is created, a few much later; 40 notes
        // of bucket 3 all updated at one moment (ties broken by uuid)
        const long long created = base + static_cast<long long>(rng() % (80 * w));
        long long updated = created + static_cast<long long>(rng() % (w / 8));
        if (i % 10 == 0) updated = created + static_cast<long long>(rng() % (40 * w));
        NoteInput n = note(new_uuid(), created, updated, {}, static_cast<int>(rng() % 16));
        if (i < 40) {
            n.created_us = base + 3 * w + i;
            n.updated_us = base + 90 * w;
        }
        m.notes[n.id] = n;
        mine.push_back(n);
        theirs.push_back(note(new_uuid(), created, updated + 1));
    }
    store->write_batch(u, {}, mine);
    store->write_batch(other, {}, theirs);
    std::vector<NoteFilter> filters;
    auto add = [&](long long cmin, long long cmax) {
        NoteFilter f;
        f.created = {cmin, cmax};
        filters.push_back(f);
        return f;
    };
    add(base + 3 * w, base + 4 * w - 1);                    // one bucket, its ties
    add(base + 3 * w + 10, base + 3 * w + 20);              // part of one bucket
    add(base + 2 * w + w / 2, base + 12 * w + w / 3);       // across buckets, partial ends
    add(kMinTime, base + 30 * w);                           // open below
    add(base + 50 * w, kMaxTime);                           // open above
    add(base - 5 * w, base + 79 * w);                       // wider than the merge takes
    add(base + 100 * w, base + 120 * w);                    // no notes
    NoteFilter f = add(base + 20 * w, base + 40 * w);
    f.flags_any = kFlagTasks | kFlagImages;
    filters.push_back(f);
    f.updated = {base + 25 * w, base + 38 * w};
    filters.push_back(f);
    for (const NoteFilter& flt : filters) {
        const auto want = m.expect(flt, OrderBy::UpdatedAt);
        BOOST_CHECK_EQUAL(store->count_notes(u, flt), static_cast<long long>(want.size()));
        for (int page : {1, 3, 7, 50, 100}) {
            BOOST_TEST_CONTEXT("created " << flt.created.min_us << ".." << flt.created.max_us
                                          << ", page " << page) {
                BOOST_CHECK(ids_of(walk(*store, u, flt, OrderBy::UpdatedAt, page)) == want);
            }
        }
    }
    BOOST_CHECK(!m.expect(filters[0], OrderBy::UpdatedAt).empty());
    // content comes with the rows when asked
    const auto page = store->list_notes(u, filters[2], OrderBy::UpdatedAt, std::nullopt, 5, true);
    BOOST_REQUIRE(!page.empty());
    BOOST_CHECK(page[0].content && *page[0].content == m.notes.at(page[0].id).content);
}

BOOST_FIXTURE_TEST_CASE(collection_listing, StoreFixture) {
    const long long u = user("cl");
    std::vector<CollectionInput> cs;
    for (int i = 0; i < 9; ++i) {
        CollectionInput c = collection(new_uuid(), "c" + std::to_string(i), 10 + i % 3);
        c.updated_us = 50 - i % 4;
        if (i % 2) c.description = "d" + std::to_string(i);
        cs.push_back(c);
    }
    store->write_batch(u, cs, {});
    auto sorted = cs;
    std::sort(sorted.begin(), sorted.end(), [](const CollectionInput& a, const CollectionInput& b) {
        return a.created_us != b.created_us ? a.created_us > b.created_us : a.id > b.id;
    });
    std::vector<std::string> got;
    std::optional<PageKey> after;
    for (;;) {
        auto rows = store->list_collections(u, {}, OrderBy::CreatedAt, after, 2);
        for (const auto& r : rows) got.push_back(r.id);
        if (rows.size() < 2) break;
        after = PageKey{rows.back().created_us, rows.back().id};
    }
    BOOST_REQUIRE_EQUAL(got.size(), sorted.size());
    for (std::size_t i = 0; i < got.size(); ++i) BOOST_CHECK_EQUAL(got[i], sorted[i].id);
    CollectionFilter f;
    f.updated = {48, 49};
    const auto some = store->list_collections(u, f, OrderBy::UpdatedAt, std::nullopt, 100);
    BOOST_CHECK_EQUAL(store->count_collections(u, f), static_cast<long long>(some.size()));
    BOOST_CHECK_EQUAL(some.size(), 4u);
    for (const auto& c : some) {
        const auto& in = *std::find_if(cs.begin(), cs.end(), [&](auto& x) { return x.id == c.id; });
        BOOST_CHECK(c.description == in.description);
        BOOST_CHECK_EQUAL(c.title, in.title);
    }
    // Re-writing a collection with a new title updates it, not duplicates it.
    cs[0].title = "renamed";
    store->write_batch(u, {cs[0]}, {});
    BOOST_CHECK_EQUAL(store->count_collections(u, {}), 9);
}

BOOST_FIXTURE_TEST_CASE(user_isolation, StoreFixture) {
    const long long a = user("a");
    const long long b = user("b");
    const std::string c = new_uuid(), n = new_uuid();
    store->write_batch(a, {collection(c, "secret", 1)}, {note(n, 1, 1, {c}, kFlagTasks)});
    NoteFilter f;
    f.collection_id = c;
    BOOST_CHECK(store->list_notes(b, {}, OrderBy::UpdatedAt, std::nullopt, 100, true).empty());
    BOOST_CHECK(store->list_notes(b, f, OrderBy::UpdatedAt, std::nullopt, 100, true).empty());
    BOOST_CHECK_EQUAL(store->count_notes(b, f), 0);
    f.flags_any = kFlagTasks;
    BOOST_CHECK_EQUAL(store->count_notes(b, f), 0);
    BOOST_CHECK(store->list_collections(b, {}, OrderBy::UpdatedAt, std::nullopt, 100).empty());
    BOOST_CHECK_EQUAL(store->count_collections(b, {}), 0);
    BOOST_CHECK(!store->delete_note(b, n));
    // B may not link A's collection, and writing B's note of the same uuid is B's own note.
    BOOST_CHECK_THROW(store->write_batch(b, {}, {note(new_uuid(), 1, 1, {c})}),
                      std::invalid_argument);
    BOOST_CHECK(store->write_batch(b, {}, {note(n, 5, 5)})[0] == WriteOutcome::Inserted);
    BOOST_CHECK_EQUAL(store->count_notes(a, f), 1);
    const auto as = store->list_notes(a, {}, OrderBy::UpdatedAt, std::nullopt, 10, false);
    BOOST_REQUIRE_EQUAL(as.size(), 1u);
    BOOST_CHECK_EQUAL(as[0].updated_us, 1);
}

BOOST_FIXTURE_TEST_CASE(utf8_round_trip, StoreFixture) {
    const long long u = user("utf8");
    const std::string c = new_uuid();
    CollectionInput ci = collection(c, "收藏 🗂️", 1);
    ci.description = "描述 — 𝄞";
    NoteInput n = note(new_uuid(), 1, 2, {c});
    n.title = "日本語のタイトル 😀";
    n.snippet = "中文摘要 𠜎𠜱 👩‍👩‍👧";
    n.content = "# 日本語のタイトル 😀\n\n한국어 본문 \xF0\x9F\x98\x80 and 𝌆\n";
    store->write_batch(u, {ci}, {n});
    const auto rows = store->list_notes(u, {}, OrderBy::UpdatedAt, std::nullopt, 1, true);
    BOOST_REQUIRE_EQUAL(rows.size(), 1u);
    BOOST_CHECK_EQUAL(rows[0].title, n.title);
    BOOST_CHECK_EQUAL(rows[0].snippet, n.snippet);
    BOOST_CHECK_EQUAL(*rows[0].content, n.content);
    const auto cs = store->list_collections(u, {}, OrderBy::UpdatedAt, std::nullopt, 1);
    BOOST_REQUIRE_EQUAL(cs.size(), 1u);
    BOOST_CHECK_EQUAL(cs[0].title, ci.title);
    BOOST_CHECK_EQUAL(*cs[0].description, *ci.description);
    n.content = "bad \xC3\x28";
    BOOST_CHECK_THROW(store->write_batch(u, {}, {n}), std::invalid_argument);
}

// Cached statements must not pin an old snapshot: another connection's writes are seen at once.
BOOST_FIXTURE_TEST_CASE(second_connection_sees_writes, StoreFixture) {
    const long long u = user("two");
    const std::string hash = sha256_hex(new_uuid());
    const long long tid = store->add_token(u, hash, "p", "", 1, TokenScope::ReadWrite);
    BOOST_CHECK(store->find_token(hash));
    BOOST_CHECK_EQUAL(store->count_notes(u, {}), 0);
    BOOST_CHECK(store->list_notes(u, {}, OrderBy::UpdatedAt, std::nullopt, 5, false).empty());
    auto other = open_store(conn);
    const std::string c = new_uuid();
    other->write_batch(u, {collection(c, "c", 1)}, {note(new_uuid(), 1, 1, {c})});
    BOOST_CHECK_EQUAL(store->count_notes(u, {}), 1);
    NoteFilter f;
    f.collection_id = c;
    BOOST_CHECK_EQUAL(store->count_notes(u, f), 1);
    BOOST_CHECK_EQUAL(store->list_notes(u, f, OrderBy::UpdatedAt, std::nullopt, 5, false).size(), 1u);
    BOOST_CHECK(other->revoke_token(tid, 2));
    BOOST_CHECK(!store->find_token(hash));
}

// A read view (ReadScope) sees one committed state on every backend: a write that another
// connection commits while it is open shows in the next view, not in this one, so a list's total
// and its page (or a search's statistics and postings) agree with each other.
BOOST_FIXTURE_TEST_CASE(read_view_sees_one_state, StoreFixture) {
    const long long u = user("view");
    store->write_batch(u, {}, {test::plain_note("first")});
    auto other = open_store(conn);
    {
        ReadScope view(*store);
        BOOST_CHECK_EQUAL(store->count_notes(u, {}), 1);
        other->write_batch(u, {}, {test::plain_note("second")});
        BOOST_CHECK_EQUAL(store->count_notes(u, {}), 1);
        BOOST_CHECK_EQUAL(store->list_notes(u, {}, OrderBy::UpdatedAt, std::nullopt, 5, false).size(), 1u);
        BOOST_CHECK_EQUAL(store->find_user(std::to_string(u)).value().note_count, 1);
    }
    BOOST_CHECK_EQUAL(store->count_notes(u, {}), 2);
    BOOST_CHECK_EQUAL(store->list_notes(u, {}, OrderBy::UpdatedAt, std::nullopt, 5, false).size(), 2u);
    BOOST_CHECK_EQUAL(store->find_user(std::to_string(u)).value().note_count, 2);
}

// SQLite only: a writer that cannot get the lock within the busy timeout is a StoreUnavailable.
BOOST_FIXTURE_TEST_CASE(busy_database_is_unavailable, StoreFixture) {
    if (!sqlite()) return;
    auto other = open_store(conn, 100);
    BOOST_CHECK_EQUAL(dynamic_cast<SociStore&>(*other).busy_timeout_ms(), 100);
    BOOST_CHECK_EQUAL(dynamic_cast<SociStore&>(*store).busy_timeout_ms(), kDefaultBusyTimeoutMs);
    const long long u = user("busy");
    // Hold the write lock through a second raw connection.
    soci::session raw(*soci::factory_sqlite3(), parse_connection_string(conn).soci_params);
    raw << "BEGIN IMMEDIATE";
    NoteInput secret = note(new_uuid(), 1, 1);
    secret.title = "secret-title-value";
    try {
        other->write_batch(u, {}, {secret});
        BOOST_ERROR("write_batch succeeded without the lock");
    } catch (const StoreUnavailable& e) {
        BOOST_CHECK_MESSAGE(e.fault() == StoreFault::Busy, e.what());
        // a safe message: no SQL, no bound values
        const std::string msg = e.what();
        BOOST_CHECK(msg.find("secret-title-value") == std::string::npos);
        BOOST_CHECK(msg.find("INSERT") == std::string::npos && msg.find("SELECT") == std::string::npos);
        BOOST_TEST_MESSAGE("busy message: " << msg);
    }
    raw << "ROLLBACK";
    BOOST_CHECK(other->write_batch(u, {}, {note(new_uuid(), 1, 1)})[0] == WriteOutcome::Inserted);
}

// A worker's store (defer_housekeeping) never checkpoints while committing: the WAL keeps the
// new pages and the database file does not grow until housekeeping() runs after a response.
BOOST_FIXTURE_TEST_CASE(sqlite_checkpoints_wait_for_housekeeping, StoreFixture) {
    if (!sqlite()) return;  // SQLite's WAL only; the server backends have nothing deferred
    std::unique_ptr<Store> worker = open_store(conn);
    worker->defer_housekeeping();
    const long long u = user("wal");
    const std::string file = dir + "/test.db";
    store.reset();  // only the worker's connection writes from here
    auto size_of = [](const std::string& path) {
        FILE* f = std::fopen(path.c_str(), "rb");
        if (!f) return -1L;
        std::fseek(f, 0, SEEK_END);
        const long n = std::ftell(f);
        std::fclose(f);
        return n;
    };
    const long before = size_of(file);
    for (int batch = 0; batch < 40; ++batch) {  // well over 1,000 pages of notes
        std::vector<NoteInput> notes;
        for (int i = 0; i < 50; ++i) {
            NoteInput n = note(new_uuid(), 1000 + i, 2000 + batch * 50 + i);
            n.content.append(2000, 'x');
            notes.push_back(n);
        }
        worker->write_batch(u, {}, notes);
    }
    BOOST_CHECK_EQUAL(size_of(file), before);                   // all of it still in the WAL
    BOOST_CHECK_GT(size_of(file + "-wal"), 1000L * 4096);
    worker->housekeeping();
    BOOST_CHECK_GT(size_of(file), before + 1000L * 4096);      // checkpointed into the file
    BOOST_CHECK_EQUAL(worker->find_user(std::to_string(u))->note_count, 2000);
    worker->housekeeping();  // nothing due: a no-op
}

// Two workers writing at once, one note per transaction as API writes do, while readers
// always hold a snapshot (searches beside writes): SQLite starts the WAL over only when a write
// begins with all of it checkpointed and no reader on it, which this load never gives. The WAL
// stays bounded all the same (housekeeping's RESTART checkpoint waits a moment for the readers
// of the moment to leave); it had grown by every frame written (1.1 GB in a 12 s benchmark run).
BOOST_FIXTURE_TEST_CASE(sqlite_wal_stays_bounded_under_writes_beside_readers, StoreFixture) {
    if (!sqlite()) return;
    const long long u = user("walgrowth");
    const std::string file = dir + "/test.db";
    store.reset();
    auto size_of = [](const std::string& path) {
        FILE* f = std::fopen(path.c_str(), "rb");
        if (!f) return 0L;
        std::fseek(f, 0, SEEK_END);
        const long n = std::ftell(f);
        std::fclose(f);
        return n;
    };
    std::atomic<bool> stop{false};
    std::thread readers([&] {
        // two connections taking turns, the next snapshot taken before the last one ends
        soci::session a(make_dialect(Backend::Sqlite)->factory(), "db=" + file);
        soci::session b(make_dialect(Backend::Sqlite)->factory(), "db=" + file);
        soci::session* s[2] = {&a, &b};
        long long n = 0;
        for (auto* x : s) *x << "PRAGMA busy_timeout=5000";
        int cur = 0;
        *s[cur] << "BEGIN";
        *s[cur] << "SELECT COUNT(*) FROM users", soci::into(n);
        while (!stop) {
            const int next = 1 - cur;
            *s[next] << "BEGIN";
            *s[next] << "SELECT COUNT(*) FROM users", soci::into(n);
            *s[cur] << "COMMIT";
            cur = next;
            std::this_thread::sleep_for(std::chrono::microseconds(500));
        }
        *s[cur] << "COMMIT";
    });
    long page = 0;
    *raw() << "PRAGMA page_size", soci::into(page);
    // twice the frames of the WAL the restart comes at (4x the checkpoint's growth), headers too
    const long bound = 2 * 4 * SociStore::kCheckpointPages * (page + 24);
    std::atomic<long> largest{0};
    constexpr int kNotes = 2500;  // per writer
    auto writer = [&](int which) {
        std::unique_ptr<Store> w = open_store(conn);
        w->defer_housekeeping();
        for (int i = 0; i < kNotes; ++i) {
            NoteInput n = note(new_uuid(), 1000 + i, 2000 + which * kNotes + i);
            n.content.append(2000, 'x');
            w->write_batch(u, {}, {n});
            w->housekeeping();
            const long wal = size_of(file + "-wal");
            for (long seen = largest; wal > seen && !largest.compare_exchange_weak(seen, wal);) {}
        }
    };
    std::thread first(writer, 0), second(writer, 1);
    first.join();
    second.join();
    stop = true;
    readers.join();
    std::unique_ptr<Store> check = open_store(conn);
    BOOST_CHECK_EQUAL(check->find_user(std::to_string(u))->note_count, 2 * kNotes);
    BOOST_TEST_MESSAGE("WAL at most " << largest << " bytes");
    BOOST_CHECK_LT(largest.load(), bound);
}

BOOST_AUTO_TEST_SUITE_END()
