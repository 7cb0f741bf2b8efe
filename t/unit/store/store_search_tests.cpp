// The store's search side, through the Store interface, against NOTESD_TEST_DB (a connection
// string) or a fresh SQLite file. The index tables are checked against a brute-force
// recomputation from the stored notes, and every query against a brute-force model.
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include <soci/soci.h>

#include "store/dialect.hpp"
#include "index/note_index.hpp"
#include "index/positions.hpp"
#include "store/migrations.hpp"
#include "store/plain_text_codec.hpp"
#include "store/segment_block_reader.hpp"
#include "store/segments.hpp"
#include "store/sqlite_direct.hpp"
#include "store/sqlite_packed.hpp"
#include "store/store.hpp"
#include "base/util.hpp"
#include "store_fixture.hpp"

using namespace notesd;

namespace {

using SearchFixture = notesd::test::StoreFixture;

// The newest schema version the build carries.
int newest_schema() { return migrations_for("sqlite").back().version; }

// The same notes in the same order (an upgrade's reads before and after).
void check_same_notes(const std::vector<TermPosting>& before, const std::vector<TermPosting>& after) {
    BOOST_REQUIRE_EQUAL(after.size(), before.size());
    for (std::size_t i = 0; i < after.size(); ++i)
        BOOST_CHECK(after[i].uid_hi == before[i].uid_hi && after[i].uid_lo == before[i].uid_lo);
}

// Back to schema 018: every stored plain text as the text itself.
void undo_019(soci::session& db) {
    for (const char* table : {"note_text", "trashed_notes"}) {
        const bool live = std::string(table) == "note_text";
        std::vector<std::pair<std::string, std::string>> rows;  // key, plain text
        soci::rowset<soci::row> rs = db.prepare
            << (live ? "SELECT CAST(t.note_id AS CHAR(20)), n.content, t.plain_text FROM note_text t "
                       "JOIN notes n ON n.id = t.note_id"
                     : "SELECT uuid, content, plain_text FROM trashed_notes");
        for (const soci::row& r : rs)
            rows.emplace_back(r.get<std::string>(0),
                              detail::decode_plain_text(r.get<std::string>(1), r.get<std::string>(2)));
        for (const auto& [key, plain] : rows) {
            if (live)
                db << "UPDATE note_text SET plain_text = :p WHERE note_id = :k", soci::use(plain, "p"),
                    soci::use(std::stoll(key), "k");
            else
                db << "UPDATE trashed_notes SET plain_text = :p WHERE uuid = :k", soci::use(plain, "p"),
                    soci::use(key, "k");
        }
    }
    db << "DELETE FROM schema_migrations WHERE version = 19";
}

// Back to schema 017 (no created_bucket column, no notes_by_created_bucket).
void undo_018(soci::session& db) {
    undo_019(db);
    const std::string name = db.get_backend_name();
    if (name == "mysql") {
        db << "ALTER TABLE notes DROP INDEX notes_by_created_bucket, DROP COLUMN created_bucket";
    } else {
        db << "DROP INDEX notes_by_created_bucket";
        db << "ALTER TABLE notes DROP COLUMN created_bucket";
    }
    db << "DELETE FROM schema_migrations WHERE version = 18";
}

// Back to schema 016 (note_time_counts ordered by time column first).
void undo_017(soci::session& db) {
    undo_018(db);
    const std::string name = db.get_backend_name();
    if (name == "mysql") {
        db << "ALTER TABLE note_time_counts DROP PRIMARY KEY, ADD PRIMARY KEY (user_id, "
              "time_column, shift, bucket, flags)";
    } else if (name == "postgresql") {
        db << "ALTER TABLE note_time_counts DROP CONSTRAINT note_time_counts_pkey";
        db << "ALTER TABLE note_time_counts ADD PRIMARY KEY (user_id, time_column, shift, bucket, flags)";
    } else {
        db << "CREATE TABLE note_time_counts_016 (user_id BIGINT NOT NULL, time_column BIGINT NOT "
              "NULL, shift BIGINT NOT NULL, bucket BIGINT NOT NULL, flags BIGINT NOT NULL, notes "
              "BIGINT NOT NULL, PRIMARY KEY (user_id, time_column, shift, bucket, flags)) WITHOUT ROWID";
        db << "INSERT INTO note_time_counts_016 SELECT user_id, time_column, shift, bucket, flags, "
              "notes FROM note_time_counts";
        db << "DROP TABLE note_time_counts";
        db << "ALTER TABLE note_time_counts_016 RENAME TO note_time_counts";
    }
    db << "DELETE FROM schema_migrations WHERE version = 17";
}

// Back to schema 015 (the blocks' index by user and term, and the one by segment not unique).
void undo_016(soci::session& db) {
    undo_017(db);
    const std::string name = db.get_backend_name();
    if (name == "mysql") {
        db << "ALTER TABLE segment_blocks DROP PRIMARY KEY, ADD PRIMARY KEY (user_id, term, "
              "segment_id, first_ord), ADD KEY segment_blocks_by_segment (segment_id, term, first_ord)";
    } else if (name == "postgresql") {
        db << "ALTER TABLE segment_blocks DROP CONSTRAINT segment_blocks_pkey";
        db << "ALTER TABLE segment_blocks ADD PRIMARY KEY (user_id, term, segment_id, first_ord)";
        db << "CREATE INDEX segment_blocks_by_segment ON segment_blocks (segment_id, term, first_ord)";
    } else {
        db << "DROP INDEX segment_blocks_by_segment";
        db << "CREATE UNIQUE INDEX segment_blocks_by_term ON segment_blocks (user_id, term, segment_id, first_ord)";
        db << "CREATE INDEX segment_blocks_by_segment ON segment_blocks (segment_id, term, first_ord)";
    }
    db << "DELETE FROM schema_migrations WHERE version = 16";
}

// Back to schema 014 (what 015 adds: an index).
void undo_015(soci::session& db) {
    undo_016(db);
    const bool mysql = db.get_backend_name() == "mysql";
    db << std::string("DROP INDEX note_collections_by_flags") + (mysql ? " ON note_collections" : "");
    db << "DELETE FROM schema_migrations WHERE version = 15";
}

// Back to schema 013 (the segments' notes tables in their rows again).
void undo_014(soci::session& db) {
    undo_015(db);
    const std::string name = db.get_backend_name();
    const std::string blob = name == "postgresql" ? "BYTEA" : name == "mysql" ? "LONGBLOB" : "BLOB";
    db << "ALTER TABLE index_segments ADD COLUMN notes " + blob;
    db << "UPDATE index_segments SET notes = (SELECT n.notes FROM index_segment_notes n WHERE "
          "n.segment_id = index_segments.id)";
    db << "DROP TABLE index_segment_notes";
    db << "DELETE FROM schema_migrations WHERE version = 14";
}

// Back to schema 012 (what 013 adds).
void undo_013(soci::session& db) {
    undo_014(db);
    db << "DROP TABLE index_pending";
    db << "DELETE FROM schema_migrations WHERE version = 13";
}

// Back to schema 011 (what 012 drops, as nullable columns).
void undo_012(soci::session& db) {
    undo_013(db);
    db << "ALTER TABLE note_text ADD COLUMN title_terms TEXT";
    db << "ALTER TABLE note_text ADD COLUMN body_terms TEXT";
    for (const char* c : {"title_terms TEXT", "body_terms TEXT", "title_len BIGINT", "body_len BIGINT"})
        db << std::string("ALTER TABLE trashed_notes ADD COLUMN ") + c;
    db << "DELETE FROM schema_migrations WHERE version = 12";
}

// Back to schema 010 (what 011 and 012 add).
void undo_011(soci::session& db) {
    undo_012(db);
    db << "DROP TABLE note_time_counts";
    db << "DELETE FROM schema_migrations WHERE version = 11";
}

// Back to schema 007 on SQLite (what 008 to 010 add), after undo_011, so that a test can
// replay older migrations.
void undo_008(soci::session& db) {
    db << "DROP TABLE segment_blocks";
    db << "DROP TABLE index_segments";
    db << "DELETE FROM schema_migrations WHERE version >= 9";
    db << "ALTER TABLE notes DROP COLUMN version";
    db << "DROP TABLE trashed_notes";
    db << "ALTER TABLE tokens DROP COLUMN scope";
    db << "DELETE FROM schema_migrations WHERE version = 8";
}

// Writes the notes in batches too small for a segment (store/segments.hpp): postings rows.
void write_rows(Store& store, long long u, const std::vector<NoteInput>& notes) {
    constexpr std::size_t kRows = 50;
    static_assert(kRows < notesd::detail::kSegmentMinNotes);
    for (std::size_t i = 0; i < notes.size(); i += kRows)
        store.write_batch(u, {}, {notes.begin() + static_cast<std::ptrdiff_t>(i),
                                  notes.begin() + static_cast<std::ptrdiff_t>(std::min(notes.size(), i + kRows))});
}

std::vector<std::string> words(const std::string& s) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < s.size()) {
        std::size_t e = s.find(' ', i);
        if (e == std::string::npos) e = s.size();
        if (e > i) out.push_back(s.substr(i, e - i));
        i = e + 1;
    }
    return out;
}

std::set<std::string> distinct(const std::string& title, const std::string& body) {
    std::set<std::string> out;
    for (auto& w : words(title)) out.insert(w);
    for (auto& w : words(body)) out.insert(w);
    return out;
}

// A snapshot of `user` with one note id, created at `created_us`, expiring at `expires_us`.
SnapshotRecord snapshot_of(long long user, long long created_us, long long expires_us) {
    SnapshotRecord s;
    s.id = new_uuid();
    s.user_id = user;
    s.fingerprint = "q:x";
    s.created_us = created_us;
    s.expires_us = expires_us;
    s.note_ids = {new_uuid()};
    return s;
}

// The terms the store indexes a note under (its analysed title and plain text).
NoteTerms terms_of(const NoteInput& n) { return note_terms(n.title, n.plain_text); }

// A note titled tt whose plain text is bt.
NoteInput mk(const std::string& id, const std::string& tt, const std::string& bt, long long created,
             long long updated, int flags = 0, std::vector<std::string> colls = {}) {
    NoteInput n;
    n.id = id;
    n.title = tt;
    n.snippet = "S";
    n.content = "# T\n\n" + bt;
    n.plain_text = bt;
    n.created_us = created;
    n.updated_us = updated;
    n.flags = flags;
    n.collection_ids = std::move(colls);
    return n;
}

CollectionInput coll(const std::string& id) {
    CollectionInput c;
    c.id = id;
    c.title = "c";
    c.created_us = c.updated_us = 1;
    return c;
}

// The expected (uid_hi, uid_lo) of a uuid, computed independently of the store.
std::pair<long long, long long> halves(const std::string& uuid) {
    std::string hex;
    for (char c : uuid)
        if (c != '-') hex += c;
    const unsigned long long sign = 1ULL << 63;
    return {static_cast<long long>(std::stoull(hex.substr(0, 16), nullptr, 16) ^ sign),
            static_cast<long long>(std::stoull(hex.substr(16), nullptr, 16) ^ sign)};
}

// Recomputes postings, term_df and the corpus sums of one user from the stored notes and
// compares them with the maintained tables, and with what the Store methods answer.
// Occurrences of each term in a space-joined stored field.
std::map<std::string, long long> term_counts(const std::string& f) {
    std::map<std::string, long long> out;
    std::size_t i = 0;
    while (i < f.size()) {
        std::size_t e = f.find(' ', i);
        if (e == std::string::npos) e = f.size();
        if (e > i) ++out[f.substr(i, e - i)];
        i = e + 1;
    }
    return out;
}

void check_index(soci::session& db, Store& store, long long user) {
    using Row = std::tuple<std::string, long long, long long, long long, long long, long long,
                           long long, long long, long long, std::string>;
    // where t occurs among the words of one field
    auto positions = [](const std::string& field, const std::string& t) {
        std::vector<int> out;
        const std::vector<std::string> w = words(field);
        for (std::size_t i = 0; i < w.size(); ++i)
            if (w[i] == t) out.push_back(static_cast<int>(i));
        return out;
    };
    std::set<Row> want_postings;
    std::map<std::string, long long> want_df;
    long long notes = 0, tt_sum = 0, bt_sum = 0;
    {
        long long id = 0, tl = 0, bl = 0, created = 0, updated = 0, flags = 0;
        std::string uuid, title, content, plain;
        soci::statement st = (db.prepare << "SELECT n.id, n.uuid, n.title, n.content, t.plain_text, "
                                            "n.title_len, n.body_len, n.created_us, n.updated_us, "
                                            "n.flags FROM notes n JOIN note_text t ON t.note_id = "
                                            "n.id WHERE n.user_id = :u",
                              soci::into(id), soci::into(uuid), soci::into(title), soci::into(content),
                              soci::into(plain),
                              soci::into(tl), soci::into(bl), soci::into(created),
                              soci::into(updated), soci::into(flags), soci::use(user, "u"));
        st.execute();
        while (st.fetch()) {
            const NoteTerms analysed = note_terms(title, detail::decode_plain_text(content, plain));
            const std::string& tt = analysed.title_terms;
            const std::string& bt = analysed.body_terms;
            BOOST_CHECK_EQUAL(tl, analysed.title_len);
            BOOST_CHECK_EQUAL(bl, analysed.body_len);
            ++notes;
            tt_sum += tl;
            bt_sum += bl;
            const auto h = halves(uuid);
            auto ct = term_counts(tt), cb = term_counts(bt);
            for (const std::string& t : distinct(tt, bt)) {
                // tfs and lens: (title, body) pairs packed as title * 2^32 + body
                want_postings.insert(Row{t, updated, h.first, h.second, id, created, flags,
                                         ct[t] * 4294967296LL + cb[t], tl * 4294967296LL + bl,
                                         encode_positions(positions(tt, t), positions(bt, t))});
                ++want_df[t];
            }
        }
    }
    std::set<Row> got_postings;
    {
        std::string term;
        std::string pos;
        long long updated = 0, hi = 0, lo = 0, note = 0, created = 0, flags = 0, tfs = 0, lens = 0;
        soci::statement st = (db.prepare << "SELECT term, updated_us, uid_hi, uid_lo, note_id, "
                                            "created_us, flags, tfs, lens, pos FROM postings WHERE "
                                            "user_id = :u",
                              soci::into(term), soci::into(updated), soci::into(hi), soci::into(lo),
                              soci::into(note), soci::into(created), soci::into(flags),
                              soci::into(tfs), soci::into(lens), soci::into(pos),
                              soci::use(user, "u"));
        st.execute();
        while (st.fetch())
            got_postings.insert(Row{term, updated, hi, lo, note, created, flags, tfs, lens, pos});
    }
    // API writes (schema 013) leave pending entries: their postings and df changes are not rows
    long long pending = 0;
    db << "SELECT COUNT(*) FROM index_pending WHERE user_id = :u", soci::into(pending), soci::use(user, "u");
    if ((got_postings.empty() && !want_postings.empty()) || pending > 0) {
        // folded into segments by the 010 upgrade, or pending: notesctl check's comparison with
        // a rebuild (which counts the pending entries' postings and df changes)
        const std::vector<std::string> problems = store.check_user(user);
        BOOST_CHECK_MESSAGE(problems.empty(), problems.size() << " differences, first: "
                                                              << (problems.empty() ? "" : problems[0]));
    } else {
        BOOST_CHECK_EQUAL(got_postings.size(), want_postings.size());
        BOOST_CHECK(got_postings == want_postings);
    }
    std::map<std::string, long long> got_df;
    {
        std::string term;
        long long df = 0;
        soci::statement st = (db.prepare << "SELECT term, df FROM term_df WHERE user_id = :u",
                              soci::into(term), soci::into(df), soci::use(user, "u"));
        st.execute();
        while (st.fetch()) got_df[term] = df;
    }
    if (pending == 0) BOOST_CHECK(got_df == want_df);
    const SearchCorpus c = store.search_corpus(user);
    BOOST_CHECK_EQUAL(c.notes, notes);
    BOOST_CHECK_EQUAL(c.title_tokens, tt_sum);
    BOOST_CHECK_EQUAL(c.body_tokens, bt_sum);
    std::vector<std::string> terms{"never-indexed"};
    for (const auto& kv : want_df) terms.push_back(kv.first);
    const std::vector<long long> dfs = store.term_dfs(user, terms);
    BOOST_REQUIRE_EQUAL(dfs.size(), terms.size());
    BOOST_CHECK_EQUAL(dfs[0], 0);
    for (std::size_t i = 1; i < terms.size(); ++i) BOOST_CHECK_EQUAL(dfs[i], want_df[terms[i]]);
}

const std::vector<std::string> kVocab = {
    "alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa",
    "東京", "京都", "😀", "한국", "café", "a", "ab", "abc"};

std::string random_terms(std::mt19937& rng, int max_words) {
    std::uniform_int_distribution<int> len(0, max_words);
    // skewed: low indexes are frequent
    std::geometric_distribution<int> pick(0.25);
    std::string out;
    for (int n = len(rng); n > 0; --n) {
        if (!out.empty()) out += ' ';
        out += kVocab[static_cast<std::size_t>(pick(rng)) % kVocab.size()];
    }
    return out;
}

// The brute-force model of term_postings.
std::vector<std::string> expect_postings(const std::map<std::string, NoteInput>& notes,
                                         const std::string& term, const SearchFilter& f,
                                         const std::set<std::string>& own_colls, int limit) {
    std::vector<const NoteInput*> v;
    for (const auto& kv : notes) {
        const NoteInput& n = kv.second;
        if (!distinct(terms_of(n).title_terms, terms_of(n).body_terms).count(term)) continue;
        if (n.created_us < f.created.min_us || n.created_us > f.created.max_us) continue;
        if (n.updated_us < f.updated.min_us || n.updated_us > f.updated.max_us) continue;
        if (f.flags_any && !(n.flags & f.flags_any)) continue;
        if (!f.collection_ids.empty()) {
            bool in = false;
            for (const std::string& c : f.collection_ids)
                if (own_colls.count(c) &&
                    std::find(n.collection_ids.begin(), n.collection_ids.end(), c) !=
                        n.collection_ids.end())
                    in = true;
            if (!in) continue;
        }
        v.push_back(&n);
    }
    std::sort(v.begin(), v.end(), [](const NoteInput* a, const NoteInput* b) {
        return a->updated_us != b->updated_us ? a->updated_us > b->updated_us : a->id > b->id;
    });
    std::vector<std::string> out;
    for (const NoteInput* n : v)
        if (static_cast<int>(out.size()) < limit) out.push_back(n->id);
    return out;
}

std::vector<std::string> posting_ids(const std::vector<TermPosting>& v) {
    std::vector<std::string> out;
    for (const auto& p : v) out.push_back(uuid_from_halves(p.uid_hi, p.uid_lo));
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(store_search)

// Random inserts, updates (terms, times, flags, word order), unchanged re-imports, a note twice in one
// batch and deletes, for two users; after every step the index equals its recomputation.
BOOST_FIXTURE_TEST_CASE(index_maintenance_matches_recomputation, SearchFixture) {
    auto db = raw();
    std::mt19937 rng(7);
    const long long users[2] = {user("idx-a"), user("idx-b")};
    std::map<std::string, NoteInput> model[2];
    std::vector<std::string> colls[2];
    for (int k = 0; k < 2; ++k) {
        for (int i = 0; i < 3; ++i) colls[k].push_back(new_uuid());
        std::vector<CollectionInput> cs;
        for (auto& c : colls[k]) cs.push_back(coll(c));
        store->write_batch(users[k], cs, {});
    }
    auto random_note = [&](int k, const std::string& id) {
        std::vector<std::string> cs;
        for (auto& c : colls[k])
            if (rng() % 3 == 0) cs.push_back(c);
        return mk(id, random_terms(rng, 4), random_terms(rng, 12), 100 + rng() % 50,
                  200 + rng() % 50, static_cast<int>(rng() % 16), cs);
    };
    for (int round = 0; round < 40; ++round) {
        const int k = round % 2;
        std::vector<NoteInput> batch;
        const int n = 1 + static_cast<int>(rng() % 8);
        for (int i = 0; i < n; ++i) {
            const int op = static_cast<int>(rng() % 7);
            if (op <= 1 || model[k].empty()) {
                batch.push_back(random_note(k, new_uuid()));
                continue;
            }
            auto it = model[k].begin();
            std::advance(it, rng() % model[k].size());
            NoteInput x = it->second;
            if (op == 2) x = random_note(k, x.id);             // new terms and times
            else if (op == 3) x.updated_us += 1 + rng() % 3;   // same terms, moved
            else if (op == 4) x.flags ^= 1 << (rng() % 4);     // only a copied column
            else if (op == 5) {                                // same counts, other positions
                std::vector<std::string> w = words(x.plain_text);
                std::rotate(w.begin(), w.begin() + (w.empty() ? 0 : 1), w.end());
                x.plain_text.clear();
                for (const std::string& t : w) x.plain_text += (x.plain_text.empty() ? "" : " ") + t;
            } else x.plain_text += x.plain_text.empty() ? "zeta" : " zeta";  // one more term
            batch.push_back(x);
            if (rng() % 4 == 0) {  // the same note again in the same batch
                NoteInput y = random_note(k, x.id);
                batch.push_back(y);
            }
        }
        if (round % 5 == 4 && !model[k].empty()) batch.push_back(model[k].begin()->second);
        store->write_batch(users[k], {}, batch);
        for (const NoteInput& x : batch) model[k][x.id] = x;
        if (round % 3 == 2) {
            auto it = model[k].begin();
            std::advance(it, rng() % model[k].size());
            BOOST_CHECK(store->delete_note(users[k], it->first));
            model[k].erase(it);
        }
        check_index(*db, *store, users[0]);
        check_index(*db, *store, users[1]);
    }
    // The stored index fields are what was written.
    for (int k = 0; k < 2; ++k) {
        std::vector<std::string> ids;
        for (const auto& kv : model[k]) ids.push_back(kv.first);
        const auto got = store->indexed_notes(users[k], ids);
        BOOST_REQUIRE_EQUAL(got.size(), ids.size());
        for (const IndexedNote& n : got) {
            const NoteInput& m = model[k].at(n.id);
            BOOST_CHECK_EQUAL(n.title_terms, terms_of(m).title_terms);
            BOOST_CHECK_EQUAL(n.body_terms, terms_of(m).body_terms);
            BOOST_CHECK_EQUAL(n.updated_us, m.updated_us);
        }
    }
    // Everything deleted: no statistics are left behind.
    for (int k = 0; k < 2; ++k)
        for (const auto& kv : model[k]) BOOST_CHECK(store->delete_note(users[k], kv.first));
    check_index(*db, *store, users[0]);
    // the deletes' df changes wait in pending entries until a fold
    for (int k = 0; k < 2; ++k) store->compact_index(users[k]);
    long long left = -1;
    *db << "SELECT " + make_dialect(parse_connection_string(conn).backend)->count_star() +
               " FROM term_df WHERE user_id = :u",
        soci::into(left), soci::use(users[0], "u");
    BOOST_CHECK_EQUAL(left, 0);
    *db << "SELECT " + make_dialect(parse_connection_string(conn).backend)->count_star() +
               " FROM index_pending WHERE user_id = :u",
        soci::into(left), soci::use(users[0], "u");
    BOOST_CHECK_EQUAL(left, 0);
    const SearchCorpus c = store->search_corpus(users[1]);
    BOOST_CHECK(c.notes == 0 && c.title_tokens == 0 && c.body_tokens == 0);
}

// A new plain text alone (same markdown, say another version's markdown rendering) counts as an
// update and moves the note's terms; the same input again does not.
BOOST_FIXTURE_TEST_CASE(plain_text_change_is_an_update, SearchFixture) {
    const long long u = user("reanalysis");
    const std::string id = new_uuid();
    NoteInput n = mk(id, "alpha", "beta", 1, 2);
    BOOST_CHECK(store->write_batch(u, {}, {n})[0] == WriteOutcome::Inserted);
    BOOST_CHECK(store->write_batch(u, {}, {n})[0] == WriteOutcome::Unchanged);
    n.plain_text = "bet";
    BOOST_CHECK(store->write_batch(u, {}, {n})[0] == WriteOutcome::Updated);
    BOOST_CHECK_EQUAL(store->term_dfs(u, {"beta", "bet"})[0], 0);
    BOOST_CHECK_EQUAL(store->term_dfs(u, {"beta", "bet"})[1], 1);
    BOOST_CHECK(store->check_user(u).empty());
    // invalid text fails the batch before anything is written
    NoteInput bad = mk(new_uuid(), "ok", "bad\xff", 1, 1);
    BOOST_CHECK_THROW(store->write_batch(u, {}, {bad}), std::invalid_argument);
    BOOST_CHECK_EQUAL(store->search_corpus(u).notes, 1);
}

// Order (updated desc, uuid desc, with ties and uuids sharing a first half), limits and every
// filter, collections included, against the brute-force model.
BOOST_FIXTURE_TEST_CASE(postings_order_limit_filters, SearchFixture) {
    std::mt19937 rng(11);
    const long long u = user("post");
    const long long other = user("post-other");
    std::vector<std::string> cs;
    for (int i = 0; i < 5; ++i) cs.push_back(new_uuid());
    const std::string foreign = new_uuid();
    {
        std::vector<CollectionInput> ci;
        for (auto& c : cs) ci.push_back(coll(c));
        store->write_batch(u, ci, {});
        store->write_batch(other, {coll(foreign)}, {mk(new_uuid(), "alpha", "beta", 1, 1, 0,
                                                       {foreign})});
    }
    std::map<std::string, NoteInput> model;
    std::vector<NoteInput> batch;
    for (int i = 0; i < 300; ++i) {
        std::string id = new_uuid();
        if (i % 10 == 0) id = "ffffffff-ffff-ffff-" + id.substr(19);  // shared first half
        if (i % 10 == 1) id = "00000000-0000-0000-" + id.substr(19);
        if (i % 10 == 2) id[0] = '8';                                // sign-bit boundary
        if (i % 10 == 3) id[0] = '7';
        std::vector<std::string> in;
        // collection 0 is small, 1 large; others random
        if (i % 60 == 5) in.push_back(cs[0]);
        if (i % 2 == 0) in.push_back(cs[1]);
        for (int c = 2; c < 5; ++c)
            if (rng() % 4 == 0) in.push_back(cs[static_cast<std::size_t>(c)]);
        NoteInput n = mk(id, random_terms(rng, 3), random_terms(rng, 10), 1000 + rng() % 40,
                         2000 + rng() % 20, static_cast<int>(rng() % 16), in);
        if (i % 7 == 0) n.plain_text += " alpha";
        model[n.id] = n;
        batch.push_back(n);
    }
    store->write_batch(u, {}, batch);
    const std::set<std::string> own(cs.begin(), cs.end());

    std::vector<SearchFilter> filters(1);
    SearchFilter f;
    f.created = {1010, 1025};
    filters.push_back(f);
    f = {};
    f.updated = {2003, 2011};
    filters.push_back(f);
    for (int m : {1, 2, 4, 8, 5}) {
        f = {};
        f.flags_any = m;
        filters.push_back(f);
    }
    const std::vector<std::vector<std::string>> coll_sets = {
        {cs[0]}, {cs[1]}, {cs[0], cs[1]}, cs, {foreign}, {new_uuid()}, {foreign, cs[2]},
        {"not-a-uuid", cs[3]}, {cs[2], cs[2]}, {cs[0], cs[3], cs[4]}};
    for (const auto& set : coll_sets) {
        f = {};
        f.collection_ids = set;
        filters.push_back(f);
        f.created = {1005, 1030};
        f.flags_any = 3;
        filters.push_back(f);
    }
    int checked = 0, nonempty = 0;
    for (const std::string term : {"alpha", "beta", "eta", "abc", "東京", "missing"}) {
        for (const SearchFilter& flt : filters) {
            for (int limit : {1, 5, 1000}) {
                const auto got = posting_ids(store->term_postings(u, term, flt, limit));
                const auto want = expect_postings(model, term, flt, own, limit);
                BOOST_CHECK_MESSAGE(got == want, "term " << term << " limit " << limit << " got "
                                                         << got.size() << " want " << want.size());
                ++checked;
                if (!want.empty()) ++nonempty;
            }
        }
    }
    BOOST_TEST_MESSAGE("postings cases " << checked << ", non-empty " << nonempty);
    BOOST_CHECK_GT(nonempty, checked / 2);
    // updated_us is returned with each id
    for (const TermPosting& p : store->term_postings(u, "alpha", {}, 50))
        BOOST_CHECK_EQUAL(p.updated_us, model.at(uuid_from_halves(p.uid_hi, p.uid_lo)).updated_us);
    BOOST_CHECK(store->term_postings(u, "alpha", {}, 0).empty());
}

// Packed postings (SQLite, schema 006): reads give the rows the model gives, in its order,
// with every counted field, whether the terms are packed, partly packed (blocks dropped by later
// writes leave gaps read from the rows) or packed again; on the servers nothing is packed and
// the same checks run on the rows.
BOOST_FIXTURE_TEST_CASE(packed_postings_match_the_model, SearchFixture) {
    std::mt19937 rng(23);
    const long long u = user("packed");
    const long long other = user("packed-other");
    std::map<std::string, NoteInput> model;
    auto random_note = [&](const std::string& id) {
        // "common" in every note, "half" in about half: lists of several blocks
        std::string body = random_terms(rng, 8) + " common";
        if (rng() % 2) body += " half";
        if (rng() % 5 == 0) body += " common";  // a count of 2
        NoteInput n = mk(id, random_terms(rng, 3), body, 1000 + rng() % 400, 5000 + rng() % 300,
                         static_cast<int>(rng() % 16));
        return n;
    };
    std::vector<NoteInput> batch;
    for (int i = 0; i < 700; ++i) {
        std::string id = new_uuid();
        if (i % 50 == 0) id = "ffffffff-ffff-ffff-" + id.substr(19);  // shared first half
        batch.push_back(random_note(id));
        model[batch.back().id] = batch.back();
    }
    write_rows(*store, u, batch);
    store->write_batch(other, {}, {mk(new_uuid(), "common", "common half", 1, 5100)});
    const bool packs = parse_connection_string(conn).backend == Backend::Sqlite;
    auto blocks = [&]() {
        long long n = 0;
        if (packs) *raw() << "SELECT COUNT(*) FROM postings_packed WHERE user_id = :u", soci::into(n), soci::use(u, "u");
        return n;
    };
    std::vector<SearchFilter> filters(1);
    SearchFilter f;
    f.updated = {5050, 5200};
    filters.push_back(f);
    f = {};
    f.created = {1100, 1300};
    f.flags_any = 5;
    filters.push_back(f);
    f = {};
    f.updated = {5120, 5120};
    filters.push_back(f);
    auto check_all = [&](const char* stage) {
        for (const std::string term : {"common", "half", "alpha", "missing"})
            for (const SearchFilter& flt : filters)
                for (int limit : {1, 100, 129, 500, 100000}) {
                    const std::vector<TermPosting> got = store->term_postings(u, term, flt, limit);
                    const auto want = expect_postings(model, term, flt, {}, limit);
                    BOOST_CHECK_MESSAGE(posting_ids(got) == want, stage << ": term " << term << " limit "
                                        << limit << " got " << got.size() << " want " << want.size());
                    for (const TermPosting& p : got) {
                        const NoteInput& n = model.at(uuid_from_halves(p.uid_hi, p.uid_lo));
                        const NoteTerms a = terms_of(n);
                        const auto t = words(a.title_terms), b = words(a.body_terms);
                        BOOST_CHECK_EQUAL(p.updated_us, n.updated_us);
                        BOOST_CHECK_EQUAL(p.title_tf, std::count(t.begin(), t.end(), term));
                        BOOST_CHECK_EQUAL(p.body_tf, std::count(b.begin(), b.end(), term));
                        BOOST_CHECK_EQUAL(p.title_len, a.title_len);
                        BOOST_CHECK_EQUAL(p.body_len, a.body_len);
                        BOOST_CHECK(!p.positions.empty());
                    }
                }
        // postings_at of notes listed by key (up to kPostingsAtMax): exactly those with the term
        std::vector<PostingNote> keys;
        for (auto it = model.begin(); it != model.end() && keys.size() < kPostingsAtMax; std::advance(it, 1 + rng() % 40)) {
            long long hi = 0, lo = 0;
            uuid_halves(it->first, hi, lo);
            keys.push_back(PostingNote{it->second.updated_us, hi, lo});
            if (std::distance(it, model.end()) <= 40) break;
        }
        for (const std::string term : {"common", "half", "alpha"}) {
            std::set<std::string> want, got;
            for (const PostingNote& k : keys) {
                const NoteInput& n = model.at(uuid_from_halves(k.uid_hi, k.uid_lo));
                const auto t = words(terms_of(n).title_terms), b = words(terms_of(n).body_terms);
                if (std::count(t.begin(), t.end(), term) + std::count(b.begin(), b.end(), term) > 0)
                    want.insert(n.id);
            }
            for (const TermPosting& p : store->postings_at(u, term, keys)) {
                BOOST_CHECK(got.insert(uuid_from_halves(p.uid_hi, p.uid_lo)).second);
                BOOST_CHECK(!p.positions.empty());
            }
            BOOST_CHECK_MESSAGE(got == want, stage << ": postings_at of " << term);
        }
    };
    check_all("unpacked");
    const long long written = store->pack_postings(u);
    BOOST_CHECK_EQUAL(written, blocks());
    if (packs) BOOST_CHECK_GT(written, 8);  // common: 6 blocks, half: 3, and more
    check_all("packed");
    {  // without positions: the same postings, positions left out where the store can
        const auto with = store->term_postings(u, "common", {}, 100000, true);
        const auto without = store->term_postings(u, "common", {}, 100000, false);
        BOOST_CHECK(posting_ids(with) == posting_ids(without));
        for (std::size_t i = 0; i < with.size() && i < without.size(); ++i) {
            BOOST_CHECK_EQUAL(with[i].body_tf, without[i].body_tf);
            BOOST_CHECK_EQUAL(with[i].body_len, without[i].body_len);
            if (packs) BOOST_CHECK(without[i].positions.empty());
        }
    }
    BOOST_CHECK_EQUAL(store->pack_postings(u), 0);  // nothing left to pack
    if (packs) {  // a damaged block is not used: its rows are read instead
        long long id = 0;
        *raw() << "SELECT id FROM postings_packed WHERE user_id = :u AND term = 'common' "
                  "ORDER BY lo_us DESC LIMIT 1 OFFSET 2", soci::into(id), soci::use(u, "u");
        BOOST_REQUIRE_GT(id, 0);
        *raw() << "UPDATE postings_packed SET data = X'0107' WHERE id = :id", soci::use(id, "id");
        check_all("damaged block");
        *raw() << "DELETE FROM postings_packed WHERE id = :id", soci::use(id, "id");
        BOOST_CHECK_EQUAL(store->pack_postings(u), 1);  // its range packed again
        check_all("re-packed");
    }
    // Updates (moved to the newest end, or within the list), deletes and new notes: the blocks
    // holding their keys go, the rest stay and the gaps are read from the rows.
    auto write_changes = [&](int round, std::size_t changed, std::size_t added) {
        batch.clear();
        for (std::size_t i = 0; i < changed; ++i) {
            auto it = model.begin();
            std::advance(it, rng() % model.size());
            NoteInput x = it->second;
            if (i % 3 == 0) x = random_note(x.id);
            else if (i % 3 == 1) x.updated_us += 1;
            else x.updated_us = 6000 + round;
            batch.push_back(x);
        }
        for (std::size_t i = 0; i < added; ++i) batch.push_back(random_note(new_uuid()));
        store->write_batch(u, {}, batch);
        for (const NoteInput& x : batch) model[x.id] = x;
        auto it = model.begin();
        std::advance(it, rng() % model.size());
        BOOST_CHECK(store->delete_note(u, it->first));
        model.erase(it);
    };
    for (int round = 0; round < 3; ++round) {
        const long long before = blocks();
        write_changes(round, 12, 1);
        if (packs) BOOST_CHECK_LT(blocks(), before);
        check_all("after writes");
        BOOST_CHECK_EQUAL(store->pack_postings(u) > 0, packs);
        check_all("packed again");
    }
    // Segments (schema 010): the same reads once compact folded the rows into a segment; while
    // small writes add rows and mark their old versions dead in it; once a large batch made a
    // second segment (and marked notes of the first dead); and after the merge.
    // a fold takes the pending entries of deleted notes too (their df changes)
    long long gone = 0;
    *raw() << "SELECT COUNT(*) FROM index_pending WHERE user_id = :u AND note_id = 0", soci::into(gone),
        soci::use(u, "u");
    IndexCompaction c = store->compact_index(u);
    BOOST_CHECK_EQUAL(c.folded_notes, static_cast<long long>(model.size()) + gone);
    // folded 256 notes per step (a bounded transaction), then merged down to kMaxSegments
    BOOST_CHECK_GE(c.segments, 1);
    BOOST_CHECK_LE(c.segments, static_cast<long long>(notesd::detail::kMaxSegments));
    BOOST_CHECK_EQUAL(blocks(), 0);
    check_all("in a segment");
    BOOST_CHECK(store->check_user(u).empty());
    write_changes(3, 12, 1);
    check_all("a segment and rows");
    write_changes(4, 80, 10);
    check_all("two segments and rows");
    BOOST_CHECK(store->check_user(u).empty());
    for (int round = 5; round < 8; ++round) write_changes(round, 70, 0);  // 5 segments
    check_all("five segments and rows");
    c = store->compact_index(u);
    BOOST_CHECK_GT(c.folded_notes, 0);
    BOOST_CHECK_EQUAL(c.segments, static_cast<long long>(notesd::detail::kMaxSegments));
    BOOST_CHECK_GE(c.merged_segments, 2);
    check_all("merged");
    BOOST_CHECK(store->check_user(u).empty());
    // The other user's single note is never in the first user's lists and vice versa.
    BOOST_CHECK_EQUAL(store->term_postings(other, "common", {}, 1000).size(), 1u);
}

// The 006 upgrade of an SQLite database with notes packs every user's postings after it
// commits (the migration itself only creates the table); with 010 in the same run the rows
// become a segment instead.
BOOST_FIXTURE_TEST_CASE(upgrade_to_006_packs_postings, SearchFixture) {
    if (parse_connection_string(conn).backend != Backend::Sqlite) return;  // 006 is empty there
    const long long u = user("upgrade-006");
    std::vector<NoteInput> batch;
    for (int i = 0; i < 200; ++i) batch.push_back(mk(new_uuid(), "title", "common words", 10 + i, 500 + i));
    write_rows(*store, u, batch);
    auto db = raw();
    *db << "DROP TABLE postings_packed";  // as at schema 005
    undo_011(*db);
    undo_008(*db);
    *db << "DELETE FROM schema_migrations WHERE version >= 6";
    db.reset();
    store = open_store(conn);
    BOOST_CHECK_EQUAL(store->schema_version(), 5);
    store->migrate();
    BOOST_CHECK_EQUAL(store->schema_version(), newest_schema());
    // 010 in the same run: the rows go into a segment instead of packed blocks
    long long blocks = -1, segments = -1;
    *raw() << "SELECT COUNT(*) FROM postings_packed WHERE user_id = :u", soci::into(blocks), soci::use(u, "u");
    *raw() << "SELECT COUNT(*) FROM index_segments WHERE user_id = :u", soci::into(segments), soci::use(u, "u");
    BOOST_CHECK_EQUAL(blocks, 0);
    BOOST_CHECK_EQUAL(segments, 1);
    BOOST_CHECK_EQUAL(store->pack_postings(u), 0);
    BOOST_CHECK_EQUAL(store->term_postings(u, "common", {}, 1000).size(), 200u);
}

// The 010 upgrade (every backend) folds each user's postings rows into a segment once its
// schema is committed: no row left, the same postings read before and after, check clean.
// Schema 014 moves each segment's notes table into a row of its own: an index with segments
// reads the same after the upgrade, and a delete of a note in a segment then marks it dead.
BOOST_FIXTURE_TEST_CASE(upgrade_to_014_keeps_segments, SearchFixture) {
    const long long u = user("upgrade-014");
    std::vector<NoteInput> batch;
    for (int i = 0; i < 300; ++i)
        batch.push_back(mk(new_uuid(), "title", "common words w" + std::to_string(i % 7), 10 + i, 500 + i));
    store->write_batch(u, {}, batch);  // one batch: a segment
    const std::vector<TermPosting> before = store->term_postings(u, "common", {}, 1000);
    BOOST_CHECK_EQUAL(before.size(), 300u);
    undo_014(*raw());
    store = open_store(conn);
    BOOST_CHECK_EQUAL(store->schema_version(), 13);
    store->migrate();
    BOOST_CHECK_EQUAL(store->schema_version(), newest_schema());
    long long moved = 0;
    *raw() << "SELECT COUNT(*) FROM index_segment_notes", soci::into(moved);
    BOOST_CHECK_GE(moved, 1);
    check_same_notes(before, store->term_postings(u, "common", {}, 1000));
    BOOST_CHECK(store->check_user(u).empty());
    BOOST_REQUIRE(store->delete_note(u, batch[0].id));
    BOOST_CHECK_EQUAL(store->term_postings(u, "common", {}, 1000).size(), 299u);
    BOOST_CHECK(store->check_user(u).empty());
}

// Schema 016 reorders the blocks' index by segment: a user's several segments read the same
// postings after the upgrade, in the same order; new segments and their merges work on it.
BOOST_FIXTURE_TEST_CASE(upgrade_to_016_reads_every_segment, SearchFixture) {
    const long long u = user("upgrade-016"), other = user("upgrade-016-other");
    for (int b = 0; b < 3; ++b) {
        std::vector<NoteInput> batch;
        for (int i = 0; i < 100; ++i)
            batch.push_back(mk(new_uuid(), "title", "common words w" + std::to_string(i % 7), 10 + 1000 * b + i, 500 + 1000 * b + i));
        store->write_batch(u, {}, batch);  // a segment each
        store->write_batch(other, {}, {mk(new_uuid(), "t", "common other", 5 + b, 6 + b)});
    }
    const std::vector<TermPosting> before = store->term_postings(u, "common", {}, 1000);
    BOOST_CHECK_EQUAL(before.size(), 300u);
    undo_016(*raw());
    store = open_store(conn);
    BOOST_CHECK_EQUAL(store->schema_version(), 15);
    store->migrate();
    BOOST_CHECK_EQUAL(store->schema_version(), newest_schema());
    check_same_notes(before, store->term_postings(u, "common", {}, 1000));
    BOOST_CHECK_EQUAL(store->term_postings(u, "w3", {}, 1000).size(), 42u);
    BOOST_CHECK_EQUAL(store->term_postings(other, "common", {}, 1000).size(), 3u);
    store->write_batch(u, {}, {mk(new_uuid(), "title", "common again", 9000, 9001)});
    store->compact_index(u);
    BOOST_CHECK_EQUAL(store->term_postings(u, "common", {}, 1000).size(), 301u);
    BOOST_CHECK_EQUAL(store->term_postings(other, "common", {}, 1000).size(), 3u);
    BOOST_CHECK(store->check_user(u).empty());
    BOOST_CHECK(store->check_user(other).empty());
}

// Schema 017 reorders note_time_counts' primary key: the maintained totals read the same before
// and after, and writes after the upgrade keep them exact.
BOOST_FIXTURE_TEST_CASE(upgrade_to_017_keeps_the_totals, SearchFixture) {
    const long long u = user("upgrade-017"), other = user("upgrade-017-other");
    const long long hour = 3600LL * 1000000, day = 24 * hour;
    std::vector<NoteInput> batch;
    for (int i = 0; i < 120; ++i)
        batch.push_back(mk(new_uuid(), "title", "text", 1700000000000000LL + i * 7 * hour,
                           1700000000000000LL + i * 9 * hour, i % 3 ? 0 : kFlagTasks));
    store->write_batch(u, {}, batch);
    store->write_batch(other, {}, {mk(new_uuid(), "t", "other", 1700000000000000LL, 1700000000000000LL)});
    std::vector<NoteFilter> filters(4);
    filters[1].created = TimeRange{1700000000000000LL + 10 * day, 1700000000000000LL + 20 * day};
    filters[2].updated = TimeRange{1700000000000000LL + 3 * day, kMaxTime};
    filters[2].flags_any = kFlagTasks;
    filters[3].created = TimeRange{kMinTime, 1700000000000000LL + 30 * day};
    filters[3].updated = TimeRange{1700000000000000LL + 5 * day, kMaxTime};
    std::vector<long long> before;
    for (const NoteFilter& f : filters) before.push_back(store->count_notes(u, f));
    BOOST_CHECK_EQUAL(before[0], 120);
    BOOST_CHECK(before[1] > 0 && before[1] < 120 && before[2] > 0 && before[2] < 40);
    undo_017(*raw());
    store = open_store(conn);
    BOOST_CHECK_EQUAL(store->schema_version(), 16);
    store->migrate();
    BOOST_CHECK_EQUAL(store->schema_version(), newest_schema());
    for (std::size_t i = 0; i < filters.size(); ++i)
        BOOST_CHECK_EQUAL(store->count_notes(u, filters[i]), before[i]);
    BOOST_CHECK_EQUAL(store->count_notes(other, NoteFilter{}), 1);
    store->write_batch(u, {}, {mk(new_uuid(), "title", "later", 1700000000000000LL + 11 * day,
                                  1700000000000000LL + 11 * day, kFlagTasks)});
    BOOST_CHECK_EQUAL(store->count_notes(u, filters[1]), before[1] + 1);
    BOOST_CHECK_EQUAL(store->count_notes(u, filters[2]), before[2] + 1);
    BOOST_CHECK(store->check_user(u).empty());
    BOOST_CHECK(store->check_user(other).empty());
}

// Schema 018 adds notes.created_bucket and its index to a filled table: a created range's page
// ordered by updated time is the same before and after, and a note written after the upgrade
// enters it.
BOOST_FIXTURE_TEST_CASE(upgrade_to_018_keeps_created_ranges, SearchFixture) {
    const long long u = user("upgrade-018");
    const long long hour = 3600LL * 1000000, day = 24 * hour, t0 = 1700000000000000LL;
    std::vector<NoteInput> batch;
    for (int i = 0; i < 90; ++i)
        batch.push_back(mk(new_uuid(), "title", "text", t0 + i * day, t0 + i * day + (i % 7) * 30 * day));
    store->write_batch(u, {}, batch);
    NoteFilter f;
    f.created = TimeRange{t0 + 20 * day, t0 + 50 * day};
    auto page = [&] {
        std::vector<std::string> ids;
        for (const NoteItem& n : store->list_notes(u, f, OrderBy::UpdatedAt, std::nullopt, 100, false))
            ids.push_back(n.id);
        return ids;
    };
    const std::vector<std::string> before = page();
    BOOST_CHECK_EQUAL(before.size(), 31u);
    undo_018(*raw());
    store = open_store(conn);
    BOOST_CHECK_EQUAL(store->schema_version(), 17);
    store->migrate();
    BOOST_CHECK_EQUAL(store->schema_version(), newest_schema());
    BOOST_CHECK(page() == before);
    const std::string later = new_uuid();
    store->write_batch(u, {}, {mk(later, "title", "later", t0 + 30 * day + 1, t0 + 400 * day)});
    const std::vector<std::string> after = page();
    BOOST_REQUIRE_EQUAL(after.size(), 32u);
    BOOST_CHECK_EQUAL(after[0], later);
    BOOST_CHECK(store->check_user(u).empty());
}

// Schema 019 rewrites the plain texts stored before it, live and trashed, as edits of their
// content: the same search, the same check, the same note after a restore.
BOOST_FIXTURE_TEST_CASE(upgrade_to_019_stores_plain_texts_as_edits, SearchFixture) {
    const long long u = user("upgrade-019");
    std::vector<NoteInput> batch;
    for (int i = 0; i < 1500; ++i)  // more than a page of the migration's walk
        batch.push_back(mk(new_uuid(), "title", "common words of note w" + std::to_string(i % 13) +
                                                    " and a longer tail of text to copy",
                           10 + i, 500 + i));
    store->write_batch(u, {}, batch);
    BOOST_REQUIRE(store->trash_note(u, batch[7].id, 9000));
    const std::vector<TermPosting> before = store->term_postings(u, "w5", {}, 1000);
    BOOST_CHECK_EQUAL(before.size(), 115u);
    auto stored = [&](const std::string& sql) {
        std::vector<std::string> out;
        auto db = raw();
        soci::rowset<std::string> rs = db->prepare << sql;
        for (const std::string& v : rs) out.push_back(v);
        return out;
    };
    const std::string live = "SELECT plain_text FROM note_text WHERE user_id = " + std::to_string(u);
    const std::string trashed = "SELECT plain_text FROM trashed_notes WHERE user_id = " + std::to_string(u);
    undo_019(*raw());
    for (const std::string& v : stored(live)) BOOST_REQUIRE(!detail::is_plain_text_edits(v));
    BOOST_REQUIRE_EQUAL(stored(trashed).size(), 1u);
    BOOST_CHECK(!detail::is_plain_text_edits(stored(trashed)[0]));
    store = open_store(conn);
    BOOST_CHECK_EQUAL(store->schema_version(), 18);
    store->migrate();
    BOOST_CHECK_EQUAL(store->schema_version(), newest_schema());
    const std::vector<std::string> after_live = stored(live);
    BOOST_CHECK_EQUAL(after_live.size(), 1499u);
    for (const std::string& v : after_live) BOOST_REQUIRE(detail::is_plain_text_edits(v));
    BOOST_CHECK(detail::is_plain_text_edits(stored(trashed)[0]));
    check_same_notes(before, store->term_postings(u, "w5", {}, 1000));
    BOOST_CHECK(store->check_user(u).empty());
    // A restored note is indexed from its decoded text: its words find it again.
    BOOST_REQUIRE(store->restore_note(u, batch[7].id));
    const std::vector<TermPosting> w7 = store->term_postings(u, "w7", {}, 1000);
    BOOST_CHECK_EQUAL(w7.size(), 115u);  // note 7 among them again
    BOOST_CHECK(store->check_user(u).empty());
    store->migrate();  // again: nothing left to rewrite, nothing encoded twice
    check_same_notes(w7, store->term_postings(u, "w7", {}, 1000));
}

BOOST_FIXTURE_TEST_CASE(upgrade_to_010_folds_rows_into_segments, SearchFixture) {
    const long long u = user("upgrade-010");
    std::vector<NoteInput> batch;
    for (int i = 0; i < 150; ++i)
        batch.push_back(mk(new_uuid(), "title", "common words w" + std::to_string(i % 7), 10 + i, 500 + i));
    write_rows(*store, u, batch);
    const std::vector<TermPosting> before = store->term_postings(u, "common", {}, 1000);
    BOOST_CHECK_EQUAL(before.size(), 150u);
    {
        auto db = raw();
        undo_011(*db);
        *db << "DROP TABLE segment_blocks";
        *db << "DROP TABLE index_segments";
        *db << "DELETE FROM schema_migrations WHERE version = 10";
    }
    store = open_store(conn);
    BOOST_CHECK_EQUAL(store->schema_version(), 9);
    store->migrate();
    BOOST_CHECK_EQUAL(store->schema_version(), newest_schema());
    long long rows = -1, segments = -1;
    auto db = raw();
    *db << "SELECT COUNT(*) FROM postings WHERE user_id = :u", soci::into(rows), soci::use(u, "u");
    *db << "SELECT COUNT(*) FROM index_segments WHERE user_id = :u", soci::into(segments), soci::use(u, "u");
    BOOST_CHECK_EQUAL(rows, 0);
    BOOST_CHECK_EQUAL(segments, 1);
    const std::vector<TermPosting> after = store->term_postings(u, "common", {}, 1000);
    BOOST_REQUIRE_EQUAL(after.size(), before.size());
    for (std::size_t i = 0; i < after.size(); ++i) {
        BOOST_CHECK(after[i].uid_hi == before[i].uid_hi && after[i].uid_lo == before[i].uid_lo);
        BOOST_CHECK_EQUAL(after[i].updated_us, before[i].updated_us);
        BOOST_CHECK_EQUAL(after[i].body_tf, before[i].body_tf);
        BOOST_CHECK_EQUAL(after[i].body_len, before[i].body_len);
        BOOST_CHECK_EQUAL(after[i].positions, before[i].positions);
    }
    BOOST_CHECK_EQUAL(store->term_postings(u, "w3", {}, 1000).size(), 21u);
    BOOST_CHECK(store->check_user(u).empty());
}

// Packing leaves the range above a term's newest posting open: a note written later (as every
// API create is) lands in that gap and drops no block, while an older key still drops its own.
BOOST_FIXTURE_TEST_CASE(packed_blocks_leave_the_top_open, SearchFixture) {
    if (parse_connection_string(conn).backend != Backend::Sqlite) return;  // rows elsewhere
    const long long u = user("open-top");
    std::vector<NoteInput> batch;
    for (int i = 0; i < 200; ++i) batch.push_back(mk(new_uuid(), "title", "common words", 10 + i, 500 + i));
    write_rows(*store, u, batch);
    store->pack_postings(u);
    auto blocks = [&] {
        long long n = 0;
        *raw() << "SELECT COUNT(*) FROM postings_packed WHERE user_id = :u AND term = 'common'",
            soci::into(n), soci::use(u, "u");
        return n;
    };
    BOOST_CHECK_EQUAL(blocks(), 2);
    store->write_batch(u, {}, {mk(new_uuid(), "title", "common words", 5000, 9000)});
    BOOST_CHECK_EQUAL(blocks(), 2);  // the new posting is above both
    BOOST_CHECK_EQUAL(store->term_postings(u, "common", {}, 1000).size(), 201u);
    store->write_batch(u, {}, {mk(batch[0].id, "title", "common words changed", 10, 9500)});
    BOOST_CHECK_EQUAL(blocks(), 1);  // the oldest note's key was in the lower block
    BOOST_CHECK_EQUAL(store->term_postings(u, "common", {}, 1000).size(), 201u);
    BOOST_CHECK_EQUAL(store->pack_postings(u) > 0, true);
    BOOST_CHECK_EQUAL(store->term_postings(u, "common", {}, 1000).size(), 201u);
}

// The block codec round-trips every field, negative and extreme values included, and refuses
// truncated or trailing data instead of reading past it.
BOOST_AUTO_TEST_CASE(packed_block_codec) {

    std::vector<PackedPosting> rows = {
        {INT64_MAX, INT64_MIN, INT64_MAX, 0, 15, 3, 7, 12, 900, "1;0,4"},
        {INT64_MAX / 2, -1, 0, INT64_MAX / 2 + 5, 0, 0, 1, 0, 2, ""},
        {1000, 42, -42, 1000, 1, 0, 0, 0, 0, std::string(300, 'p')},
        {-5, 0, 1, INT64_MIN, -3, 0x7fffffffLL, 0, 0x7fffffffLL, 1, "x"}};
    const std::string data = encode_block(rows);
    std::vector<PackedPosting> back;
    BOOST_REQUIRE(decode_block(data, static_cast<long long>(rows.size()), back));
    BOOST_REQUIRE_EQUAL(back.size(), rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        BOOST_CHECK_EQUAL(back[i].updated_us, rows[i].updated_us);
        BOOST_CHECK_EQUAL(back[i].uid_hi, rows[i].uid_hi);
        BOOST_CHECK_EQUAL(back[i].uid_lo, rows[i].uid_lo);
        BOOST_CHECK_EQUAL(back[i].created_us, rows[i].created_us);
        BOOST_CHECK_EQUAL(back[i].flags, rows[i].flags);
        BOOST_CHECK_EQUAL(back[i].title_tf, rows[i].title_tf);
        BOOST_CHECK_EQUAL(back[i].body_tf, rows[i].body_tf);
        BOOST_CHECK_EQUAL(back[i].title_len, rows[i].title_len);
        BOOST_CHECK_EQUAL(back[i].body_len, rows[i].body_len);
        BOOST_CHECK_EQUAL(back[i].pos, rows[i].pos);
    }
    for (std::size_t cut = 0; cut < data.size(); ++cut) {
        back.clear();
        BOOST_CHECK(!decode_block(data.substr(0, cut), static_cast<long long>(rows.size()), back));
    }
    BOOST_CHECK(!decode_block(data + "x", static_cast<long long>(rows.size()), back));
    std::string other = data;
    other[0] = 2;  // another format
    BOOST_CHECK(!decode_block(other, static_cast<long long>(rows.size()), back));
    std::swap(rows[0], rows[2]);  // older before newer
    BOOST_CHECK_THROW(encode_block(rows), std::invalid_argument);
}

// postings_at: the rows of given notes by their whole key, with counts and positions; notes of
// another user, other keys, notes sharing only the time and notes without the term give none.
BOOST_FIXTURE_TEST_CASE(postings_at_looks_up_rows_by_key, SearchFixture) {
    const long long u = user("at"), other = user("at-other");
    const std::string a = new_uuid(), b = new_uuid(), c = new_uuid(), d = new_uuid();
    store->write_batch(u, {}, {mk(a, "file system", "the file system and a file", 1, 100),
                               mk(b, "", "system file", 1, 200), mk(c, "nothing", "here", 1, 300),
                               mk(d, "", "file", 1, 200)});
    // e shares d's time and the first half of its uuid: only the whole key tells them apart
    const std::string e = d.substr(0, 24) + (d.substr(24) == "000000000000" ? "000000000001" : "000000000000");
    store->write_batch(u, {}, {mk(e, "", "file file", 1, 200)});
    const std::string o = new_uuid();
    store->write_batch(other, {}, {mk(o, "file", "file", 1, 100)});
    auto key = [](const std::string& id, long long us) {
        PostingNote n;
        n.updated_us = us;
        uuid_halves(id, n.uid_hi, n.uid_lo);
        return n;
    };
    auto by_id = [](const std::vector<TermPosting>& v) {
        std::map<std::string, TermPosting> out;
        for (const TermPosting& p : v) out[uuid_from_halves(p.uid_hi, p.uid_lo)] = p;
        return out;
    };
    auto got = by_id(store->postings_at(u, "file", {key(a, 100), key(c, 300), key(b, 200), key(a, 100)}));
    BOOST_REQUIRE_EQUAL(got.size(), 2u);  // a and b; c has no "file"; d shares b's time, unasked
    BOOST_CHECK_EQUAL(got[a].title_tf, 1);
    BOOST_CHECK_EQUAL(got[a].body_tf, 2);
    BOOST_CHECK_EQUAL(got[a].positions, "0;1,4");
    BOOST_CHECK_EQUAL(got[b].positions, ";1");
    BOOST_CHECK_EQUAL(got[a].body_len, 6);
    got = by_id(store->postings_at(u, "file", {key(d, 200), key(a, 100)}));
    BOOST_CHECK_EQUAL(got.size(), 2u);
    BOOST_CHECK_EQUAL(got.count(d) + got.count(a), 2u);
    BOOST_CHECK_EQUAL(got[d].positions, ";0");
    got = by_id(store->postings_at(u, "file", {key(e, 200)}));
    BOOST_CHECK_EQUAL(got.size(), 1u);
    BOOST_CHECK_EQUAL(got[e].positions, ";0,1");
    BOOST_CHECK(store->postings_at(u, "file", {key(a, 150)}).empty());  // a key a is no longer at
    BOOST_CHECK(store->postings_at(u, "absent", {key(a, 100), key(b, 200)}).empty());
    BOOST_CHECK(store->postings_at(u, "file", {}).empty());
    BOOST_CHECK(store->postings_at(other, "file", {key(a, 100)}).empty());  // a is not other's
    BOOST_CHECK_EQUAL(store->postings_at(other, "file", {key(o, 100), key(a, 100)}).size(), 1u);
    BOOST_CHECK(store->postings_at(u, "file", {key(o, 100)}).empty());  // nor o u's
    BOOST_CHECK_THROW(store->postings_at(u, "file", std::vector<PostingNote>(kPostingsAtMax + 1, key(a, 100))),
                      std::invalid_argument);
    // On SQLite these rows came through the direct scan (sqlite_direct.hpp), elsewhere through SOCI.
    auto db = raw();
    BOOST_CHECK_EQUAL(detail::is_sqlite_session(*db),
                      parse_connection_string(conn).backend == Backend::Sqlite);
}

// A segment's notes table as each backend's reader gives it (SQLite: incremental blob I/O into a
// reused buffer; the servers: SOCI): it decodes to the segment's notes, a second table read
// after a larger one is whole, and a segment id that does not exist is nullopt.
BOOST_FIXTURE_TEST_CASE(segment_notes_tables_read_whole, SearchFixture) {
    const long long u = user("notes-table");
    for (std::size_t batch : {detail::kSegmentMinNotes * 2, detail::kSegmentMinNotes}) {
        std::vector<NoteInput> notes;
        for (std::size_t i = 0; i < batch; ++i) notes.push_back(test::plain_note("t" + std::to_string(i)));
        store->write_batch(u, {}, notes);
    }
    auto db = raw();
    std::vector<std::pair<long long, long long>> segments;  // id, notes
    {
        long long id = 0, n = 0;
        soci::statement st = (db->prepare << "SELECT id, note_count FROM index_segments WHERE user_id = :u "
                                             "ORDER BY id", soci::into(id), soci::into(n), soci::use(u, "u"));
        st.execute();
        while (st.fetch()) segments.emplace_back(id, n);
    }
    BOOST_REQUIRE_EQUAL(segments.size(), 2u);
    const std::unique_ptr<Dialect> dialect = make_dialect(target.backend);
    std::unique_ptr<detail::SegmentBlockReader> reader =
        detail::make_segment_block_reader(target.backend, *db, *dialect);
    for (const auto& [id, n] : segments) {
        const std::optional<std::string_view> table = reader->notes_table(id);
        BOOST_REQUIRE(table);
        SegmentNotes decoded;
        BOOST_REQUIRE(decode_segment_notes(*table, decoded));
        BOOST_CHECK_EQUAL(decoded.size(), static_cast<std::size_t>(n));
    }
    BOOST_CHECK(!reader->notes_table(segments.back().first + 1000));
}

// A read scope sees one state of the database (SQLite: a read transaction) and leaves the
// connection ready for writes; scopes do not nest and end_read alone does nothing.
BOOST_FIXTURE_TEST_CASE(read_scope_sees_one_state_and_allows_writes_after, SearchFixture) {
    const long long u = user("scope");
    store->end_read();
    store->write_batch(u, {}, {mk(new_uuid(), "one", "word", 1, 100)});
    {
        ReadScope view(*store);
        ReadScope again(*store);
        BOOST_CHECK_EQUAL(store->search_corpus(u).notes, 1);
        // another connection commits a note meanwhile
        std::unique_ptr<Store> other = open_store(conn);
        other->write_batch(u, {}, {mk(new_uuid(), "two", "word", 1, 200)});
        if (parse_connection_string(conn).backend == Backend::Sqlite) {
            BOOST_CHECK_EQUAL(store->search_corpus(u).notes, 1);  // the scope's state
            BOOST_CHECK_EQUAL(store->term_dfs(u, {"word"})[0], 1);
        }
    }
    BOOST_CHECK_EQUAL(store->search_corpus(u).notes, 2);
    store->write_batch(u, {}, {mk(new_uuid(), "three", "word", 1, 300)});
    BOOST_CHECK_EQUAL(store->term_dfs(u, {"word"})[0], 3);
}

// prefix_terms: bytewise range, df desc then term asc, limit, and the top code point edge. The
// terms are term_df rows written here, as no text analyses into most of them.
BOOST_FIXTURE_TEST_CASE(prefix_terms_order_and_edges, SearchFixture) {
    const long long u = user("prefix");
    const std::string top = "\xF4\x8F\xBF\xBF";     // U+10FFFF
    const std::string below_sur = "\xED\x9F\xBF";   // U+D7FF
    const std::string above_sur = "\xEE\x80\x80";   // U+E000
    const std::vector<std::pair<std::string, int>> terms = {
        {"a", 1}, {"ab", 2}, {"abc", 3}, {"abd", 3}, {"abe", 1}, {"ac", 5}, {"b", 2},
        {"x" + top, 2}, {"x" + top + "z", 1}, {"x" + top + top, 1}, {"y", 1}, {top, 1},
        {top + "a", 2}, {below_sur + "a", 1}, {above_sur, 1}, {"東京", 2}, {"東", 1}, {"😀", 1}};
    std::map<std::string, long long> df;
    for (const auto& t : terms) df[t.first] = t.second;
    const long long other = user("prefix-other");
    {
        auto db = raw();
        auto put = [&](long long user_id, const std::string& term, long long n) {
            *db << "INSERT INTO term_df (user_id, term, df) VALUES (:u, :t, :d)",
                soci::use(user_id, "u"), soci::use(term, "t"), soci::use(n, "d");
        };
        for (const auto& kv : df) put(u, kv.first, kv.second);
        put(other, "abz", 1);
        put(other, "abc", 1);
    }

    for (const std::string& p : {std::string(), std::string("a"), std::string("ab"),
                                std::string("abc"), std::string("abz"), std::string("x"),
                                "x" + top, "x" + top + top, top, below_sur, above_sur,
                                std::string("東"), std::string("😀"), std::string("zz")}) {
        for (int limit : {1, 2, 100}) {
            std::vector<std::pair<std::string, long long>> want;
            for (const auto& kv : df)
                if (kv.first.compare(0, p.size(), p) == 0) want.push_back(kv);
            std::sort(want.begin(), want.end(), [](const auto& a, const auto& b) {
                return a.second != b.second ? a.second > b.second : a.first < b.first;
            });
            if (static_cast<int>(want.size()) > limit) want.resize(static_cast<std::size_t>(limit));
            BOOST_CHECK_MESSAGE(store->prefix_terms(u, p, limit) == want,
                                "prefix '" << p << "' limit " << limit);
        }
    }
    // Not whole code points: nothing, and no error.
    BOOST_CHECK(store->prefix_terms(u, "\xff", 10).empty());
    BOOST_CHECK(store->prefix_terms(u, "ab\xff", 10).empty());
    BOOST_CHECK(store->prefix_terms(u, "a", 0).empty());
}

BOOST_FIXTURE_TEST_CASE(snapshots_save_find_expire_purge, SearchFixture) {
    const long long u = user("snap");
    const long long v = user("snap-other");
    SnapshotRecord s;
    s.id = new_uuid();
    s.user_id = u;
    s.fingerprint = "q:東京 \"x\"|f:1";
    s.created_us = 100;
    s.expires_us = 1000;
    s.note_ids = {new_uuid(), new_uuid(), new_uuid()};
    store->save_snapshot(s);
    auto got = store->find_snapshot(u, s.id, 999);
    BOOST_REQUIRE(got);
    BOOST_CHECK_EQUAL(got->id, s.id);
    BOOST_CHECK_EQUAL(got->user_id, u);
    BOOST_CHECK_EQUAL(got->fingerprint, s.fingerprint);
    BOOST_CHECK_EQUAL(got->created_us, 100);
    BOOST_CHECK_EQUAL(got->expires_us, 1000);
    BOOST_CHECK(got->note_ids == s.note_ids);
    // upper case id finds the same snapshot
    std::string upper = s.id;
    std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
    BOOST_CHECK(store->find_snapshot(u, upper, 999));
    BOOST_CHECK(!store->find_snapshot(u, s.id, 1000));  // expired at expires_us
    BOOST_CHECK(!store->find_snapshot(v, s.id, 999));   // foreign
    BOOST_CHECK(!store->find_snapshot(u, new_uuid(), 999));
    BOOST_CHECK(!store->find_snapshot(u, "nope", 999));
    // an empty result list round-trips
    SnapshotRecord e = s;
    e.id = new_uuid();
    e.note_ids.clear();
    store->save_snapshot(e);
    got = store->find_snapshot(u, e.id, 0);
    BOOST_REQUIRE(got);
    BOOST_CHECK(got->note_ids.empty());
    SnapshotRecord bad = s;
    bad.id = "x";
    BOOST_CHECK_THROW(store->save_snapshot(bad), std::invalid_argument);
    bad = s;
    bad.id = new_uuid();
    bad.note_ids = {"a b"};
    BOOST_CHECK_THROW(store->save_snapshot(bad), std::invalid_argument);
    // Purge: only expired rows, at most max_rows at a time. Times far in the future keep this
    // independent of other tests' rows on a shared database.
    const long long base = 4000000000000000LL;
    std::vector<std::string> live;
    for (int i = 0; i < 7; ++i) {
        SnapshotRecord r = s;
        r.id = new_uuid();
        r.user_id = i % 2 ? u : v;
        r.expires_us = base + (i < 5 ? i : 1000 + i);
        store->save_snapshot(r);
        if (i >= 5) live.push_back(r.id);
    }
    // expire everything older than base first (earlier tests' rows and the ones above)
    while (store->purge_snapshots(base - 1, 1000) > 0) {
    }
    BOOST_CHECK_EQUAL(store->purge_snapshots(base + 10, 3), 3);
    BOOST_CHECK_EQUAL(store->purge_snapshots(base + 10, 3), 2);
    BOOST_CHECK_EQUAL(store->purge_snapshots(base + 10, 3), 0);
    BOOST_CHECK_EQUAL(store->purge_snapshots(base + 10, 0), 0);
    for (const std::string& id : live) {
        const bool found = store->find_snapshot(u, id, base + 10).has_value() ||
                           store->find_snapshot(v, id, base + 10).has_value();
        BOOST_CHECK(found);
    }
    BOOST_CHECK(!store->find_snapshot(u, s.id, 0));  // purged with the expired ones
}

// SQLite: snapshots are written to the attached FILE-snapshots, so a search's commit leaves the
// main file as it was and other connections keep their page caches (data_version moves when
// another connection commits to that file; a note write shows that it does).
BOOST_FIXTURE_TEST_CASE(sqlite_snapshots_leave_the_main_file_unchanged, SearchFixture) {
    if (dir.empty()) return;  // NOTESD_TEST_DB: a server backend keeps snapshots in its database
    const long long u = user("snapfile");
    soci::session reader(make_dialect(Backend::Sqlite)->factory(), "db=" + dir + "/test.db");
    const auto version = [&] {
        long long v = 0;
        reader << "PRAGMA main.data_version", soci::into(v);
        return v;
    };
    const long long before = version();
    const SnapshotRecord s = snapshot_of(u, 1, 2);
    store->save_snapshot(s);
    BOOST_CHECK_EQUAL(store->purge_snapshots(3, 10), 1);
    store->save_snapshot(s);
    BOOST_CHECK_EQUAL(version(), before);
    long long in_main = 0;
    reader << "SELECT COUNT(*) FROM sqlite_master WHERE name = 'snapshots'", soci::into(in_main);
    BOOST_CHECK_EQUAL(in_main, 0);  // schema 005 dropped the main file's table
    // the sibling file holds it, for every connection
    std::unique_ptr<Store> other = open_store(conn);
    BOOST_CHECK(other->find_snapshot(u, s.id, 1).has_value());
    soci::session file(make_dialect(Backend::Sqlite)->factory(), "db=" + dir + "/test.db-snapshots");
    std::string hex = s.id;
    hex.erase(std::remove(hex.begin(), hex.end(), '-'), hex.end());
    long long rows = 0, bytes = 0;
    file << "SELECT COUNT(*), SUM(length(note_ids)) FROM search_snapshots WHERE id = x'" + hex + "'",
        soci::into(rows), soci::into(bytes);
    BOOST_CHECK_EQUAL(rows, 1);
    BOOST_CHECK_EQUAL(bytes, 16);  // one note id, as 16 bytes
    store->write_batch(u, {}, {mk(new_uuid(), "alpha", "beta", 5, 5)});
    BOOST_CHECK_NE(version(), before);
}

// SQLite finds a snapshot by the first 8 bytes of its id, then compares all 16: ids that share
// their first half are told apart, and each keeps its own rows.
BOOST_FIXTURE_TEST_CASE(sqlite_snapshots_sharing_a_first_half, SearchFixture) {
    if (dir.empty()) return;  // SQLite only
    const long long u = user("snaphalf");
    SnapshotRecord a = snapshot_of(u, 1, 100), b = snapshot_of(u, 1, 100);
    a.id = "0123abcd-4567-4def-8000-000000000001";
    b.id = "0123abcd-4567-4def-8000-000000000002";
    a.fingerprint = "fa";
    b.fingerprint = "fb";
    b.note_ids = {new_uuid(), new_uuid(), new_uuid()};
    store->save_snapshot(a);
    store->save_snapshot(b);
    auto ga = store->find_snapshot(u, a.id, 50), gb = store->find_snapshot(u, b.id, 50);
    BOOST_REQUIRE(ga && gb);
    BOOST_CHECK_EQUAL(ga->fingerprint, "fa");
    BOOST_CHECK_EQUAL(gb->fingerprint, "fb");
    BOOST_CHECK_EQUAL_COLLECTIONS(ga->note_ids.begin(), ga->note_ids.end(), a.note_ids.begin(), a.note_ids.end());
    BOOST_CHECK_EQUAL_COLLECTIONS(gb->note_ids.begin(), gb->note_ids.end(), b.note_ids.begin(), b.note_ids.end());
    BOOST_CHECK_EQUAL(gb->id, b.id);
    BOOST_CHECK(!store->find_snapshot(u, "0123abcd-4567-4def-8000-000000000003", 50));
}

// Schema 007 drops the text-format table of the snapshots file (rows of earlier versions).
BOOST_FIXTURE_TEST_CASE(upgrade_to_007_drops_old_snapshot_rows, SearchFixture) {
    if (dir.empty()) return;  // SQLite only; 007 is empty on the servers
    store.reset();
    {
        soci::session file(make_dialect(Backend::Sqlite)->factory(), "db=" + dir + "/test.db-snapshots");
        file << "CREATE TABLE IF NOT EXISTS snapshots (id TEXT PRIMARY KEY, user_id BIGINT NOT NULL, "
                "fingerprint TEXT NOT NULL, created_us BIGINT NOT NULL, expires_us BIGINT NOT NULL, "
                "note_ids TEXT NOT NULL)";
        file << "INSERT INTO snapshots VALUES ('" + new_uuid() + "', 1, 'f', 1, 2, '')";
    }
    {
        auto db = raw();
        undo_011(*db);
        undo_008(*db);
        *db << "DELETE FROM schema_migrations WHERE version >= 7";
    }
    store = open_store(conn);
    BOOST_CHECK_EQUAL(store->schema_version(), 6);
    store->migrate();
    BOOST_CHECK_EQUAL(store->schema_version(), newest_schema());
    soci::session file(make_dialect(Backend::Sqlite)->factory(), "db=" + dir + "/test.db-snapshots");
    long long old_tables = -1;
    file << "SELECT COUNT(*) FROM sqlite_master WHERE name = 'snapshots'", soci::into(old_tables);
    BOOST_CHECK_EQUAL(old_tables, 0);
    const long long u = user("snap007");
    const SnapshotRecord s = snapshot_of(u, 1, 2);
    store->save_snapshot(s);
    BOOST_CHECK(store->find_snapshot(u, s.id, 1).has_value());
}

// The snapshots file is created when missing even where the main file may not be (nocreate);
// a read-only database gets none: reads work, saving a snapshot fails as it did before.
BOOST_FIXTURE_TEST_CASE(sqlite_snapshots_file_with_nocreate_and_readonly, SearchFixture) {
    if (dir.empty()) return;  // SQLite only
    const long long u = user("snapopts");
    store.reset();
    for (const char* f : {"-snapshots", "-snapshots-wal", "-snapshots-shm"})
        std::remove((dir + "/test.db" + f).c_str());
    BOOST_REQUIRE_EQUAL(chmod((dir + "/test.db").c_str(), 0600), 0);
    SnapshotRecord s = snapshot_of(u, 1, 2);
    {
        std::unique_ptr<Store> nc = open_store(conn + " nocreate=1");
        nc->save_snapshot(s);
        BOOST_CHECK(nc->find_snapshot(u, s.id, 1).has_value());
    }
    struct stat made {};
    BOOST_REQUIRE_EQUAL(stat((dir + "/test.db-snapshots").c_str(), &made), 0);
    BOOST_CHECK_EQUAL(made.st_mode & 0777, 0600u);  // no wider than the main file
    if (geteuid() == 0) {  // made by root for a main file that another user owns: theirs
        for (const char* f : {"-snapshots", "-snapshots-wal", "-snapshots-shm"})
            std::remove((dir + "/test.db" + f).c_str());
        BOOST_REQUIRE_EQUAL(chown((dir + "/test.db").c_str(), 65534, 65534), 0);
        open_store(conn)->save_snapshot(snapshot_of(u, 1, 2));
        BOOST_REQUIRE_EQUAL(stat((dir + "/test.db-snapshots").c_str(), &made), 0);
        BOOST_CHECK_EQUAL(made.st_uid, 65534u);
        BOOST_CHECK_EQUAL(made.st_gid, 65534u);
        BOOST_REQUIRE_EQUAL(chown((dir + "/test.db").c_str(), 0, 0), 0);
    }
    BOOST_CHECK(parse_connection_string(conn + " readonly=1").sqlite_readonly);
    std::unique_ptr<Store> ro = open_store(conn + " readonly=1");
    BOOST_CHECK(ro->find_user(std::to_string(u)).has_value());
    s.id = new_uuid();
    BOOST_CHECK_THROW(ro->save_snapshot(s), std::exception);
}

// Every search method answers for its user only.
BOOST_FIXTURE_TEST_CASE(user_isolation, SearchFixture) {
    const long long a = user("iso-a");
    const long long b = user("iso-b");
    const std::string ca = new_uuid();
    const std::string na = new_uuid();
    store->write_batch(a, {coll(ca)}, {mk(na, "common onlya", "common body", 5, 6, 1, {ca})});
    const std::string nb = new_uuid();
    store->write_batch(b, {}, {mk(nb, "common", "common other word", 7, 8, 1)});
    BOOST_CHECK_EQUAL(store->term_dfs(b, {"common", "onlya"})[0], 1);
    BOOST_CHECK_EQUAL(store->term_dfs(b, {"common", "onlya"})[1], 0);
    BOOST_CHECK(store->prefix_terms(b, "only", 10).empty());
    BOOST_CHECK_EQUAL(store->prefix_terms(a, "only", 10).size(), 1u);
    const auto pb = posting_ids(store->term_postings(b, "common", {}, 10));
    BOOST_CHECK(pb == std::vector<std::string>{nb});
    SearchFilter f;
    f.collection_ids = {ca};
    BOOST_CHECK(store->term_postings(b, "common", f, 10).empty());
    BOOST_CHECK(posting_ids(store->term_postings(a, "common", f, 10)) == std::vector<std::string>{na});
    BOOST_CHECK(store->indexed_notes(b, {na}).empty());
    BOOST_CHECK(store->notes_by_ids(b, {na}, true).empty());
    BOOST_CHECK_EQUAL(store->notes_by_ids(a, {na, nb}, false).size(), 1u);
    const SearchCorpus cb = store->search_corpus(b);
    BOOST_CHECK_EQUAL(cb.notes, 1);
    BOOST_CHECK_EQUAL(cb.title_tokens, 1);
    BOOST_CHECK_EQUAL(cb.body_tokens, 3);
    BOOST_CHECK_EQUAL(store->search_corpus(a).title_tokens, 2);
    BOOST_CHECK(!store->delete_note(b, na));
    BOOST_CHECK_EQUAL(store->term_dfs(a, {"onlya"})[0], 1);
}

// notes_by_ids reads a page in one statement of at most 100 ids: longer lists and repeated
// ids still come back whole and in the asked order.
BOOST_FIXTURE_TEST_CASE(notes_by_ids_long_and_repeated_lists, SearchFixture) {
    const long long u = user("hits-long");
    const std::string a = new_uuid(), b = new_uuid(), c = new_uuid();
    store->write_batch(u, {}, {mk(a, "a", "x", 1, 1), mk(b, "b", "x", 2, 2), mk(c, "c", "x", 3, 3)});
    std::vector<std::string> ask, want;
    for (int i = 0; i < 207; ++i) {  // over two statements of 100 (the largest page)
        const std::string& id = i % 4 == 0 ? a : i % 4 == 1 ? c : i % 4 == 2 ? b : a;
        ask.push_back(i % 9 == 5 ? new_uuid() : id);  // some unknown ids among them
        if (i % 9 != 5) want.push_back(id);
    }
    const auto hits = store->notes_by_ids(u, ask, false);
    BOOST_REQUIRE_EQUAL(hits.size(), want.size());
    for (std::size_t i = 0; i < hits.size(); ++i) BOOST_CHECK_EQUAL(hits[i].note.id, want[i]);
    BOOST_CHECK(store->notes_by_ids(user("hits-other"), ask, false).empty());
}

// The server backends read a chunk of ids through the shortest of a few IN-list lengths
// (kHitsLengths: 10, 20, 50, 100): every count of distinct ids at and around each length comes
// back whole, in order, with nothing of another user's.
BOOST_FIXTURE_TEST_CASE(notes_by_ids_every_list_length, SearchFixture) {
    const long long u = user("hits-lengths");
    std::vector<NoteInput> ns;
    for (int i = 0; i < 101; ++i) ns.push_back(mk(new_uuid(), "t" + std::to_string(i), "x", i + 1, i + 1));
    store->write_batch(u, {}, ns);
    for (std::size_t n : {1, 2, 9, 10, 11, 19, 20, 21, 49, 50, 51, 99, 100, 101}) {
        std::vector<std::string> ask;
        for (std::size_t i = 0; i < n; ++i) ask.push_back(ns[(i * 37) % ns.size()].id);
        const auto hits = store->notes_by_ids(u, ask, false);
        BOOST_REQUIRE_EQUAL(hits.size(), n);
        for (std::size_t i = 0; i < n; ++i) BOOST_CHECK_EQUAL(hits[i].note.id, ask[i]);
        BOOST_CHECK(store->notes_by_ids(user("hits-lengths-other"), ask, false).empty());
    }
}

// notes_by_ids: the given order, deleted and unknown ids left out, items as list_notes has them.
BOOST_FIXTURE_TEST_CASE(notes_by_ids_as_list_items, SearchFixture) {
    const long long u = user("hits");
    const std::string c = new_uuid();
    std::vector<NoteInput> ns;
    for (int i = 0; i < 5; ++i) {
        NoteInput n = mk(new_uuid(), "t", "b", 10 + i, 20 + i, 0, i % 2 ? std::vector<std::string>{c}
                                                                         : std::vector<std::string>{});
        n.plain_text = "plain text " + std::to_string(i) + " 東京";
        Attachment at;
        at.id = new_uuid();
        at.kind = AttachmentKind::Audio;
        at.target = "a.m4a";
        n.attachments.push_back(at);
        ns.push_back(n);
    }
    store->write_batch(u, {coll(c)}, ns);
    BOOST_CHECK(store->delete_note(u, ns[2].id));
    std::string upper = ns[4].id;
    std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
    const std::vector<std::string> ask = {upper, ns[0].id, ns[2].id, new_uuid(), "junk", ns[3].id};
    for (bool content : {false, true}) {
        const auto hits = store->notes_by_ids(u, ask, content);
        const auto list = store->list_notes(u, {}, OrderBy::UpdatedAt, std::nullopt, 10, content);
        BOOST_REQUIRE_EQUAL(hits.size(), 3u);
        const std::vector<int> order = {4, 0, 3};
        for (std::size_t i = 0; i < hits.size(); ++i) {
            const NoteInput& in = ns[static_cast<std::size_t>(order[i])];
            const NoteItem& h = hits[i].note;
            BOOST_CHECK_EQUAL(h.id, in.id);
            BOOST_CHECK_EQUAL(hits[i].plain_text, in.plain_text);
            auto it = std::find_if(list.begin(), list.end(),
                                   [&](const NoteItem& x) { return x.id == in.id; });
            BOOST_REQUIRE(it != list.end());
            BOOST_CHECK_EQUAL(h.title, it->title);
            BOOST_CHECK_EQUAL(h.snippet, it->snippet);
            BOOST_CHECK(h.content == it->content);
            BOOST_CHECK_EQUAL(h.content.has_value(), content);
            BOOST_CHECK_EQUAL(h.created_us, it->created_us);
            BOOST_CHECK_EQUAL(h.updated_us, it->updated_us);
            BOOST_CHECK(h.collection_ids == it->collection_ids);
            BOOST_CHECK(h.audio_recording_ids == it->audio_recording_ids);
            BOOST_CHECK_EQUAL(h.audio_recording_ids.size(), 1u);
        }
    }
}

// CJK and accented text: its terms (bigrams, folded words) round-trip through every method
// byte for byte; an emoji is no term.
BOOST_FIXTURE_TEST_CASE(cjk_and_accented_terms_round_trip, SearchFixture) {
    const long long u = user("cjk");
    const std::string id = new_uuid();
    const std::string tt = "東京 京都";
    const std::string bt = "東京 都庁 😀 한국 café 𠮷野";
    store->write_batch(u, {}, {mk(id, tt, bt, 1, 2)});
    for (const std::string t : {"東京", "京都", "都庁", "한국", "cafe", "𠮷野"}) {
        BOOST_CHECK_EQUAL(store->term_dfs(u, {t})[0], 1);
        BOOST_CHECK(posting_ids(store->term_postings(u, t, {}, 5)) == std::vector<std::string>{id});
    }
    BOOST_CHECK_EQUAL(store->term_dfs(u, {"東"})[0], 0);
    BOOST_CHECK_EQUAL(store->term_dfs(u, {"café"})[0], 0);
    BOOST_CHECK_EQUAL(store->term_dfs(u, {"😀"})[0], 0);
    const auto p = store->prefix_terms(u, "東", 10);
    BOOST_REQUIRE_EQUAL(p.size(), 1u);
    BOOST_CHECK_EQUAL(p[0].first, "東京");
    BOOST_CHECK_EQUAL(p[0].second, 1);
    const auto ix = store->indexed_notes(u, {id});
    BOOST_REQUIRE_EQUAL(ix.size(), 1u);
    BOOST_CHECK_EQUAL(ix[0].title_terms, tt);
    BOOST_CHECK_EQUAL(ix[0].body_terms, "東京 都庁 한국 cafe 𠮷野");
    BOOST_CHECK_EQUAL(store->search_corpus(u).body_tokens, 5);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(store_upgrade)

// A database written by schema 002 (terms in the notes rows, postings without counts) keeps its
// notes and gets a complete index from `migrate`: note_text filled, postings rebuilt with the
// counts and lengths (check_index recomputes everything from the stored title and plain text).
BOOST_AUTO_TEST_CASE(schema_002_database_upgrades_to_counted_postings) {
    std::string dir = "/tmp/notesd-upgrade-XXXXXX";
    BOOST_REQUIRE(mkdtemp(&dir[0]));
    const std::string conn = "sqlite3://db=" + dir + "/old.db";
    {
        soci::session db(make_dialect(Backend::Sqlite)->factory(), "db=" + dir + "/old.db");
        for (const EmbeddedMigration& m : migrations_for("sqlite")) {
            if (m.version > 2) continue;
            for (const std::string& st : split_sql(m.sql)) db << st;
            db << "INSERT INTO schema_migrations (version, name, applied_us) VALUES (" +
                      std::to_string(m.version) + ", 'x', 1)";
        }
        db << "INSERT INTO users (id, name, created_us, note_count, title_tokens, body_tokens) "
              "VALUES (1, 'old', 1, 2, 3, 5)";
        const char* notes[][4] = {{"0a000000-0000-4000-8000-000000000001", "alpha beta", "beta beta gamma", "10"},
                                  {"0b000000-0000-4000-8000-000000000002", "delta", "alpha 東京", "20"}};
        long long id = 0;
        for (const auto& n : notes) {
            ++id;
            const std::string uuid = n[0], tt = n[1], bt = n[2];
            const long long tl = static_cast<long long>(words(tt).size());
            const long long bl = static_cast<long long>(words(bt).size());
            const long long updated = std::stoll(n[3]);
            db << "INSERT INTO notes (id, user_id, uuid, title, snippet, content, created_us, "
                  "updated_us, flags, collection_uuids, audio_uuids, content_hash, title_terms, "
                  "body_terms, title_len, body_len, plain_text) VALUES (:id, 1, :uuid, :title, 's', "
                  "'c', 1, :up, 0, '', '', 'h', :tt, :bt, :tl, :bl, :plain)",
                soci::use(id, "id"), soci::use(uuid, "uuid"), soci::use(tt, "title"),
                soci::use(updated, "up"), soci::use(tt, "tt"), soci::use(bt, "bt"),
                soci::use(tl, "tl"), soci::use(bl, "bl"), soci::use(bt, "plain");
            const auto h = halves(uuid);
            for (const std::string& t : distinct(tt, bt)) {
                db << "INSERT INTO postings (user_id, term, updated_us, uid_hi, uid_lo, note_id, "
                      "created_us, flags) VALUES (1, :t, :up, :hi, :lo, :id, 1, 0)",
                    soci::use(t, "t"), soci::use(updated, "up"), soci::use(h.first, "hi"),
                    soci::use(h.second, "lo"), soci::use(id, "id");
                db << "INSERT INTO term_df (user_id, term, df) VALUES (1, :t, 1) ON CONFLICT "
                      "(user_id, term) DO UPDATE SET df = df + 1",
                    soci::use(t, "t");
            }
        }
    }
    {
        std::unique_ptr<Store> store = open_store(conn);
        BOOST_CHECK_EQUAL(store->schema_version(), 2);
        store->migrate();
        BOOST_CHECK_GE(store->schema_version(), 4);
        soci::session db(make_dialect(Backend::Sqlite)->factory(), "db=" + dir + "/old.db");
        check_index(db, *store, 1);
        // "beta": once in the title and twice in the body of a note with 2 + 3 terms, at title
        // position 1 and body positions 0 and 1
        const std::vector<TermPosting> beta = store->term_postings(1, "beta", {}, 10);
        BOOST_REQUIRE_EQUAL(beta.size(), 1u);
        BOOST_CHECK_EQUAL(beta[0].title_tf, 1);
        BOOST_CHECK_EQUAL(beta[0].body_tf, 2);
        BOOST_CHECK_EQUAL(beta[0].title_len, 2);
        BOOST_CHECK_EQUAL(beta[0].body_len, 3);
        BOOST_CHECK_EQUAL(beta[0].positions, "1;0,1");
        const auto hits = store->notes_by_ids(1, {"0b000000-0000-4000-8000-000000000002"}, false);
        BOOST_REQUIRE_EQUAL(hits.size(), 1u);
        BOOST_CHECK_EQUAL(hits[0].plain_text, "alpha 東京");
    }
    for (const char* f : {"/old.db", "/old.db-wal", "/old.db-shm", "/old.db-snapshots",
                          "/old.db-snapshots-wal", "/old.db-snapshots-shm"})
        std::remove((dir + f).c_str());
    rmdir(dir.c_str());
}

BOOST_AUTO_TEST_SUITE_END()
