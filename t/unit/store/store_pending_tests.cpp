// Pending index entries (schema 013, store/pending_notes.hpp): what searches read while API
// writes wait in pending rows is exactly what they read once a fold has moved them into a
// segment and term_df, on every backend; notesctl check is clean on both sides.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "index/search_index.hpp"
#include "store/soci_store.hpp"
#include "store/store.hpp"
#include "base/util.hpp"
#include "store_fixture.hpp"

using namespace notesd;

namespace {

const std::vector<std::string> kWords = {"alpha", "beta", "gamma", "delta", "alps", "alto",
                                         "epsilon", "zeta", "eta", "theta", "東京", "café"};

std::string text(std::mt19937& rng, int n) {
    std::geometric_distribution<int> pick(0.3);
    std::string out;
    for (int i = 0; i < n; ++i) {
        if (!out.empty()) out += ' ';
        out += kWords[static_cast<std::size_t>(pick(rng)) % kWords.size()];
    }
    return out;
}

NoteInput note(std::mt19937& rng, const std::string& id, long long created, long long updated,
               std::vector<std::string> colls) {
    NoteInput n;
    n.id = id;
    n.title = text(rng, 2);
    n.plain_text = text(rng, 3 + static_cast<int>(rng() % 12));
    n.content = "# " + n.title + "\n\n" + n.plain_text;
    n.snippet = "s";
    n.created_us = created;
    n.updated_us = updated;
    n.flags = static_cast<int>(rng() % 4);
    n.collection_ids = std::move(colls);
    return n;
}

std::string show(const std::vector<TermPosting>& ps) {
    std::ostringstream o;
    for (const TermPosting& p : ps)
        o << p.uid_hi << ':' << p.uid_lo << '@' << p.updated_us << ' ' << p.title_tf << '/'
          << p.body_tf << ' ' << p.title_len << '/' << p.body_len << ' ' << p.positions.size() << ';';
    return o.str();
}

// Everything the search module reads, as text: postings of each word under several filters
// and limits, dfs, prefix expansions and postings by key.
std::string reads(Store& store, long long u, const std::vector<std::string>& colls,
                  const std::vector<PostingNote>& keys) {
    std::ostringstream o;
    std::vector<SearchFilter> filters(5);
    filters[1].flags_any = 1;
    filters[2].updated.min_us = 150;
    filters[2].updated.max_us = 400;
    filters[3].collection_ids = {colls[0]};
    filters[4].collection_ids = colls;
    filters[4].created.max_us = 300;
    for (const std::string& w : kWords)
        for (std::size_t f = 0; f < filters.size(); ++f)
            for (int limit : {3, 1000})
                o << w << ' ' << f << ' ' << limit << ": "
                  << show(store.term_postings(u, w, filters[f], limit, limit == 3)) << '\n';
    std::vector<std::string> terms = kWords;
    terms.push_back("never");
    for (long long df : store.term_dfs(u, terms)) o << df << ' ';
    o << '\n';
    for (const char* p : {"a", "al", "e", "z", "東"})
        for (int limit : {1, 2, 50})
            for (const auto& [t, df] : store.prefix_terms(u, p, limit)) o << p << limit << ' ' << t << '=' << df << ' ';
    o << '\n';
    for (const std::string& w : kWords) o << w << " at: " << [&] {
            std::vector<TermPosting> got = store.postings_at(u, w, keys);
            std::sort(got.begin(), got.end(), candidate_before);
            return show(got);
        }() << '\n';
    return o.str();
}

// The first line that differs, both ways; empty when equal.
std::string first_difference(const std::string& a, const std::string& b) {
    std::istringstream x(a), y(b);
    std::string la, lb;
    while (true) {
        const bool ga = static_cast<bool>(std::getline(x, la)), gb = static_cast<bool>(std::getline(y, lb));
        if (!ga && !gb) return "";
        if (!ga || !gb || la != lb) return "\n< " + la + "\n> " + lb;
    }
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(store_pending, notesd::test::StoreFixture)

BOOST_AUTO_TEST_CASE(pending_reads_equal_folded_reads) {
    std::mt19937 rng(13);
    const long long u = user("pending");
    const long long other = user("pending-other");
    std::vector<std::string> colls = {new_uuid(), new_uuid()};
    const std::vector<CollectionInput> cs = test::plain_collections(colls);
    // 100 notes imported as a segment, then API writes of every kind over them
    std::vector<NoteInput> batch;
    std::map<std::string, NoteInput> live;
    for (int i = 0; i < 100; ++i) {
        std::vector<std::string> in;
        if (i % 3 == 0) in.push_back(colls[0]);
        if (i % 5 == 0) in.push_back(colls[1]);
        batch.push_back(note(rng, new_uuid(), 100 + i, 100 + 2 * i, in));
    }
    store->write_batch(u, cs, batch);
    store->write_batch(other, {}, {note(rng, new_uuid(), 1, 1, {})});
    for (const NoteInput& n : batch) live[n.id] = n;
    auto any_live = [&] {
        auto it = live.begin();
        std::advance(it, static_cast<long>(rng() % live.size()));
        return it->first;
    };
    std::vector<std::string> trashed;
    long long clock = 1000;
    for (int i = 0; i < 120; ++i) {
        const int op = static_cast<int>(rng() % 10);
        if (op < 3) {  // create, some in collections
            NoteInput n = note(rng, new_uuid(), clock, clock, {});
            if (rng() % 2) n.collection_ids = {colls[rng() % 2]};
            BOOST_REQUIRE(store->create_note(u, n).status == NoteWriteStatus::Done);
            live[n.id] = n;
        } else if (op < 7) {  // update (of segment notes and of pending ones, repeatedly)
            const std::string id = any_live();
            const auto rec = store->find_note(u, id);
            BOOST_REQUIRE(rec);
            NoteInput n = note(rng, id, rec->created_us, std::max(rec->created_us, clock - 500), {});
            BOOST_REQUIRE(store->update_note(u, n, rec->version).status == NoteWriteStatus::Done);
            n.collection_ids = live[id].collection_ids;
            live[id] = n;
        } else if (op == 7) {
            const std::string id = any_live();
            BOOST_REQUIRE(store->trash_note(u, id, clock));
            trashed.push_back(id);
            live.erase(id);
        } else if (op == 8 && !trashed.empty()) {
            const std::string id = trashed.back();
            trashed.pop_back();
            BOOST_REQUIRE(store->restore_note(u, id));
            live[id] = NoteInput();
        } else {
            const std::string id = any_live();
            BOOST_REQUIRE(store->delete_note(u, id));
            live.erase(id);
        }
        ++clock;
    }
    std::vector<PostingNote> keys;
    for (const auto& [id, n] : live) {
        const auto rec = store->find_note(u, id);
        BOOST_REQUIRE(rec);
        long long hi = 0, lo = 0;
        uuid_halves(id, hi, lo);
        keys.push_back(PostingNote{rec->updated_us, hi, lo});
        if (keys.size() == kPostingsAtMax) break;
    }
    const std::vector<std::string> before_problems = store->check_user(u);
    for (const std::string& p : before_problems) BOOST_ERROR("pending: " << p);
    const std::string before = reads(*store, u, colls, keys);
    const IndexCompaction c = store->compact_index(u);
    BOOST_CHECK_GT(c.folded_notes, 60);  // the API writes were pending
    const std::string after = reads(*store, u, colls, keys);
    BOOST_CHECK_EQUAL(first_difference(before, after), "");
    for (const std::string& p : store->check_user(u)) BOOST_ERROR("folded: " << p);
    // the other user's index is untouched by all of it
    BOOST_CHECK_EQUAL(store->term_postings(other, "alpha", {}, 1000).size() +
                          store->term_postings(other, "beta", {}, 1000).size() > 0,
                      true);
    BOOST_CHECK(store->check_user(other).empty());
    // a second round of writes over the folded state reads the same again once folded
    for (int i = 0; i < 20; ++i) {
        const std::string id = any_live();
        const auto rec = store->find_note(u, id);
        NoteInput n = note(rng, id, rec->created_us, std::max(rec->created_us, clock++), {});
        BOOST_REQUIRE(store->update_note(u, n, rec->version).status == NoteWriteStatus::Done);
    }
    keys.clear();
    for (const auto& [id, n] : live) {
        const auto rec = store->find_note(u, id);
        long long hi = 0, lo = 0;
        uuid_halves(id, hi, lo);
        keys.push_back(PostingNote{rec->updated_us, hi, lo});
        if (keys.size() == kPostingsAtMax) break;
    }
    const std::string again = reads(*store, u, colls, keys);
    store->compact_index(u);
    BOOST_CHECK_EQUAL(first_difference(again, reads(*store, u, colls, keys)), "");
    BOOST_CHECK(store->check_user(u).empty());
}

// A large batch is analysed on several threads (store/soci_write.cpp prepare_notes): its notes
// arrive in order, and the first invalid note in batch order fails it, writing nothing.
// Within a read view a user's first listing also reads the corpus and whether the user has
// postings rows and pending entries, in one statement (Segments::view_head): every read in a
// view equals the same read outside one, whichever read comes first, with a segment, postings
// rows and pending entries, once they are folded, and for a user with nothing indexed.
BOOST_AUTO_TEST_CASE(reads_in_a_view_equal_reads_outside) {
    std::mt19937 rng(29);
    const long long u = user("view-head");
    const long long nothing = user("view-head-empty");
    std::vector<std::string> colls = {new_uuid(), new_uuid()};
    std::vector<NoteInput> batch;
    for (int i = 0; i < 100; ++i)  // a segment
        batch.push_back(note(rng, new_uuid(), 100 + i, 100 + i, {colls[static_cast<std::size_t>(i % 2)]}));
    store->write_batch(u, test::plain_collections(colls), batch);
    std::vector<NoteInput> few;
    for (int i = 0; i < 5; ++i) few.push_back(note(rng, new_uuid(), 300 + i, 300 + i, {}));
    store->write_batch(u, {}, few);  // postings rows (a batch under a segment's 64 notes)
    for (int i = 0; i < 5; ++i)      // pending entries
        BOOST_REQUIRE(store->create_note(u, note(rng, new_uuid(), 400 + i, 400 + i, {colls[0]})).status ==
                      NoteWriteStatus::Done);
    std::vector<PostingNote> keys;
    for (std::size_t i = 0; i < batch.size() && keys.size() < kPostingsAtMax; i += 7) {
        long long hi = 0, lo = 0;
        uuid_halves(batch[i].id, hi, lo);
        keys.push_back(PostingNote{batch[i].updated_us, hi, lo});
    }
    auto corpus = [&](long long who) {
        const SearchCorpus c = store->search_corpus(who);
        return std::to_string(c.notes) + " " + std::to_string(c.title_tokens) + " " +
               std::to_string(c.body_tokens) + "\n";
    };
    auto compare = [&](long long who, const std::string& state) {
        const std::string outside = corpus(who) + reads(*store, who, colls, keys);
        std::string corpus_first, reads_first;
        {
            ReadScope view(*store);
            corpus_first = corpus(who) + reads(*store, who, colls, keys);
        }
        {
            ReadScope view(*store);
            const std::string r = reads(*store, who, colls, keys);
            reads_first = corpus(who) + r;
        }
        BOOST_CHECK_MESSAGE(first_difference(outside, corpus_first).empty(),
                            state << ", corpus first:" << first_difference(outside, corpus_first));
        BOOST_CHECK_MESSAGE(first_difference(outside, reads_first).empty(),
                            state << ", postings first:" << first_difference(outside, reads_first));
    };
    compare(u, "segment, rows and pending entries");
    compare(nothing, "nothing indexed");
    BOOST_CHECK_GT(store->compact_index(u).folded_notes, 0);
    compare(u, "folded");
    for (const std::string& p : store->check_user(u)) BOOST_ERROR(p);
}

BOOST_AUTO_TEST_CASE(large_batch_analysed_in_parallel_keeps_order_and_first_error) {
    std::mt19937 rng(5);
    const long long u = user("parallel");
    std::vector<NoteInput> batch;
    for (int i = 0; i < 300; ++i) batch.push_back(note(rng, new_uuid(), 10 + i, 10 + i, {}));
    std::vector<NoteInput> bad = batch;
    bad[120].title = std::string("\xff", 1);  // in an early part
    bad[260].id = "not-a-uuid";               // in a later one
    try {
        store->write_batch(u, {}, bad);
        BOOST_ERROR("an invalid batch was written");
    } catch (const std::invalid_argument& e) {
        BOOST_CHECK_EQUAL(std::string(e.what()), "note title is not valid UTF-8");
    }
    BOOST_CHECK_EQUAL(store->search_corpus(u).notes, 0);
    const std::vector<WriteOutcome> out = store->write_batch(u, {}, batch);
    BOOST_REQUIRE_EQUAL(out.size(), batch.size());
    for (WriteOutcome o : out) BOOST_CHECK(o == WriteOutcome::Inserted);
    BOOST_CHECK_EQUAL(store->search_corpus(u).notes, 300);
    for (int i : {0, 149, 299}) {
        const auto rec = store->find_note(u, batch[static_cast<std::size_t>(i)].id);
        BOOST_REQUIRE(rec);
        BOOST_CHECK_EQUAL(rec->title, batch[static_cast<std::size_t>(i)].title);
        BOOST_CHECK_EQUAL(rec->updated_us, 10 + i);
    }
    BOOST_CHECK(store->check_user(u).empty());
}

// A fold writes its segment hidden, then publishes it with the user locked (soci_compact.cpp):
// writes that land in between (another connection's) replace or remove pending entries the
// fold has read. Their notes are dead in the new segment and their replacements stay pending,
// so nothing is lost or counted twice: the index equals a rebuild from the stored text.
BOOST_AUTO_TEST_CASE(writes_during_a_fold_leave_the_index_exact) {
    std::mt19937 rng(21);
    const long long u = user("fold-race");
    auto plain = [](const std::string& id, const std::string& words, long long t) {
        NoteInput n;
        n.id = id;
        n.title = "t";
        n.plain_text = words;
        n.content = "# t\n\n" + words;
        n.snippet = "s";
        n.created_us = n.updated_us = t;
        return n;
    };
    std::vector<NoteInput> batch;
    for (int i = 0; i < 100; ++i) batch.push_back(plain(new_uuid(), "kiwi seg" + std::to_string(i), 10 + i));
    store->write_batch(u, {}, batch);
    std::vector<std::string> created;
    for (int i = 0; i < 30; ++i) {
        created.push_back(new_uuid());
        BOOST_REQUIRE(store->create_note(u, plain(created.back(), "api old" + std::to_string(i), 1000 + i)).status ==
                      NoteWriteStatus::Done);
    }
    for (int i = 0; i < 5; ++i)  // segment notes with a pending entry (and a minus)
        BOOST_REQUIRE(store->update_note(u, plain(batch[static_cast<std::size_t>(i)].id, "first" + std::to_string(i), 2000 + i), 1)
                          .status == NoteWriteStatus::Done);
    auto* s = dynamic_cast<SociStore*>(store.get());
    BOOST_REQUIRE(s);
    int fired = 0;
    s->on_fold_written([&] {
        if (fired++) return;
        std::unique_ptr<Store> other = open_store(conn);
        for (int i = 0; i < 3; ++i)  // pending creates replaced
            BOOST_REQUIRE(other->update_note(u, plain(created[static_cast<std::size_t>(i)], "api new" + std::to_string(i), 3000 + i), 1)
                              .status == NoteWriteStatus::Done);
        BOOST_REQUIRE(other->delete_note(u, created[3]));
        BOOST_REQUIRE(other->trash_note(u, created[4], 3100));
        for (int i = 0; i < 2; ++i)  // segment notes' pending entries replaced
            BOOST_REQUIRE(other->update_note(u, plain(batch[static_cast<std::size_t>(i)].id, "second" + std::to_string(i), 3200 + i), 2)
                              .status == NoteWriteStatus::Done);
        BOOST_REQUIRE(other->create_note(u, plain(new_uuid(), "late", 3300)).status == NoteWriteStatus::Done);
    });
    const IndexCompaction c = store->compact_index(u);
    s->on_fold_written({});
    BOOST_CHECK_GE(fired, 1);
    BOOST_CHECK_GT(c.folded_notes, 0);
    for (const std::string& p : store->check_user(u)) BOOST_ERROR("after the fold: " << p);
    auto count = [&](const std::string& w) { return store->term_postings(u, w, {}, 1000).size(); };
    BOOST_CHECK_EQUAL(count("old0"), 0u);
    BOOST_CHECK_EQUAL(count("new0"), 1u);
    BOOST_CHECK_EQUAL(count("old3"), 0u);
    BOOST_CHECK_EQUAL(count("old4"), 0u);
    BOOST_CHECK_EQUAL(count("old5"), 1u);
    BOOST_CHECK_EQUAL(count("first0"), 0u);
    BOOST_CHECK_EQUAL(count("second0"), 1u);
    BOOST_CHECK_EQUAL(count("first2"), 1u);
    BOOST_CHECK_EQUAL(count("seg0"), 0u);
    BOOST_CHECK_EQUAL(count("late"), 1u);
    BOOST_CHECK_EQUAL(count("api"), 28u);
    BOOST_CHECK(store->term_dfs(u, {"api", "kiwi", "late"}) == (std::vector<long long>{28, 95, 1}));
    store->compact_index(u);  // what the racing writes left pending folds too
    for (const std::string& p : store->check_user(u)) BOOST_ERROR("after the second fold: " << p);
    BOOST_CHECK_EQUAL(count("api"), 28u);
    BOOST_CHECK(store->term_dfs(u, {"api", "kiwi", "late"}) == (std::vector<long long>{28, 95, 1}));
}

BOOST_AUTO_TEST_SUITE_END()
