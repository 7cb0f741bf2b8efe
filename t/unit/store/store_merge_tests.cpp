// Merges in steps (store/segments.hpp, segment_merge.cpp): a merge reads its inputs and writes
// its blocks outside the user's lock, so another connection marks notes dead meanwhile; the
// publish carries those deletions over, and loses (changing nothing) when its inputs or its
// unpublished row went away. Every backend (two connections to the same database).
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <soci/soci.h>

#include "index/positions.hpp"
#include "index/search_index.hpp"
#include "index/segment_pack.hpp"
#include "store/dialect.hpp"
#include "store/segments.hpp"
#include "store/soci_store.hpp"
#include "store_fixture.hpp"

using namespace notesd;
using namespace notesd::test;

namespace {

struct Conn {
    Conn(const DbTarget& t, const Dialect& d)
        : dialect(d), session(d.factory(), t.soci_params),
          segments(session, d, detail::make_segment_block_reader(t.backend, session, d)) {}
    // f with the user "locked" (a write transaction, as SociStore's locked_write opens one)
    template <class F>
    void write(long long u, F&& f) {
        for (const std::string& st : dialect.begin_write()) session << st;
        segments.begin_write(u);
        f();
        session << "COMMIT";
    }
    const Dialect& dialect;
    soci::session session;
    detail::Segments segments;
};

// Three notes with times base+0..2, each holding "alpha" and a term of its own.
void add_segment(Conn& c, long long u, long long base) {
    c.write(u, [&] {
        SegmentBuilder b;
        for (long long i = 0; i < 3; ++i)
            b.add(SegmentNote{base + i, base + i, 7, base, 0, 1, 2},
                  {SegmentTerm{"alpha", 1, 0, "0"}, SegmentTerm{"own" + std::to_string(base + i), 0, 1, "1"}});
        c.segments.flush(u, b);
    });
}

// The same notes as add_segment, written as a merge or a fold writes a small segment: one pack
// (index/segment_pack.hpp) under an unpublished row, then published.
void add_packed_segment(Conn& c, long long u, long long base) {
    SegmentBuilder b;
    for (long long i = 0; i < 3; ++i)
        b.add(SegmentNote{base + i, base + i, 7, base, 0, 1, 2},
              {SegmentTerm{"alpha", 1, 0, "0"}, SegmentTerm{"own" + std::to_string(base + i), 0, 1, "1"}});
    std::vector<SegmentBlock> blocks;
    const std::string table = b.finish([&](SegmentBlock&& blk) { blocks.push_back(std::move(blk)); });
    long long id = 0;
    c.write(u, [&] { id = c.segments.insert_unpublished(u); });
    c.write(u, [&] { c.segments.insert_pack(u, id, blocks); });
    c.write(u, [&] { c.segments.write_unpublished_notes(id, table); });
    auto notes = std::make_shared<SegmentNotes>();
    BOOST_REQUIRE(decode_segment_notes(table, *notes));
    detail::Segments::Publish done = detail::Segments::Publish::lost;
    c.write(u, [&] { done = c.segments.publish(u, id, {}, notes); });
    BOOST_REQUIRE(done == detail::Segments::Publish::published);
}

std::vector<TermPosting> postings(Conn& c, long long u, const std::string& term) {
    std::vector<TermPosting> out;
    c.segments.term_postings(u, term, SearchFilter{}, 100, false, nullptr, out);
    return out;
}

// A merge of all the user's segments up to its publish: (unpublished id, inputs, notes table).
struct Built {
    long long id = 0;
    std::vector<detail::SegmentRef> inputs;
    std::shared_ptr<const SegmentNotes> notes;  // its notes table, written unpublished
};
Built build(Conn& m, long long u) {
    Built out;
    out.inputs = m.segments.of_user(u);
    m.write(u, [&] { out.id = m.segments.insert_unpublished(u); });
    std::vector<SegmentInput> in;
    for (const detail::SegmentRef& r : out.inputs) in.push_back(m.segments.input_of(r));
    std::vector<SegmentBlock> blocks;
    const std::string table = merge_segments(in, [&](SegmentBlock&& b) { blocks.push_back(std::move(b)); });
    m.write(u, [&] { m.segments.insert_blocks(u, out.id, blocks); });
    m.write(u, [&] { m.segments.write_unpublished_notes(out.id, table); });
    auto notes = std::make_shared<SegmentNotes>();
    BOOST_REQUIRE(decode_segment_notes(table, *notes));
    out.notes = notes;
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(store_merge)

BOOST_FIXTURE_TEST_CASE(publish_carries_over_deletions_made_during_the_merge, StoreFixture) {
    const long long u = user("merge-steps");
    const std::unique_ptr<Dialect> d = make_dialect(target.backend);
    Conn merger(target, *d), writer(target, *d);
    add_segment(writer, u, 100);
    add_segment(writer, u, 200);
    const Built b = build(merger, u);
    BOOST_REQUIRE_EQUAL(b.inputs.size(), 2u);
    // unpublished: no reader sees it, its blocks are skipped
    BOOST_CHECK_EQUAL(writer.segments.of_user(u).size(), 2u);
    BOOST_CHECK_EQUAL(postings(writer, u, "alpha").size(), 6u);
    // meanwhile a write marks a note of the first input dead
    writer.write(u, [&] {
        BOOST_CHECK(writer.segments.remove_note(u, 101, 101, 7));
        SegmentBuilder none;
        writer.segments.flush(u, none);
    });
    detail::Segments::Publish done = detail::Segments::Publish::lost;
    merger.write(u, [&] { done = merger.segments.publish(u, b.id, b.inputs, b.notes); });
    BOOST_CHECK(done == detail::Segments::Publish::published);
    const std::vector<detail::SegmentRef> now = writer.segments.of_user(u);
    BOOST_REQUIRE_EQUAL(now.size(), 1u);
    BOOST_CHECK_EQUAL(now[0].id, b.id);
    BOOST_CHECK_EQUAL(now[0].live.notes(), 6);
    BOOST_CHECK_EQUAL(now[0].live.live_count(), 5);
    BOOST_CHECK_EQUAL(now[0].stored_live_count, 5);
    const std::vector<TermPosting> alpha = postings(writer, u, "alpha");
    BOOST_CHECK_EQUAL(alpha.size(), 5u);
    for (const TermPosting& p : alpha) BOOST_CHECK_NE(p.updated_us, 101);
    BOOST_CHECK(postings(writer, u, "own101").empty());
    BOOST_CHECK_EQUAL(postings(writer, u, "own202").size(), 1u);
    // the inputs are hidden, dropping; once dropped their blocks are gone
    std::vector<long long> hidden;
    merger.write(u, [&] { hidden = merger.segments.mark_hidden_dropping(u); });
    BOOST_CHECK_EQUAL(hidden.size(), 2u);
    for (long long id : hidden) merger.write(u, [&] { merger.segments.delete_dropped(id); });
    long long blocks = 0;
    merger.session << "SELECT " + d->count_star() + " FROM segment_blocks WHERE user_id = :u",
        soci::into(blocks), soci::use(u, "u");
    BOOST_CHECK_EQUAL(blocks, 7);  // the merged segment's: alpha and the six own terms
    BOOST_CHECK_EQUAL(postings(writer, u, "alpha").size(), 5u);
}

// A reader in snapshot views (every search) keeps the term blocks it read
// (term_block_cache.hpp): through a new segment, a deletion, a merge's publish and its inputs'
// drop, its term reads and postings_at give exactly what reads outside a view give (a
// statement each time). Every backend.
BOOST_FIXTURE_TEST_CASE(cached_term_blocks_read_as_the_database_holds_them, StoreFixture) {
    const long long u = user("block-cache");
    const std::unique_ptr<Dialect> d = make_dialect(target.backend);
    Conn merger(target, *d), writer(target, *d), reader(target, *d);
    using Key = std::tuple<long long, long long, long long, int, int, std::string>;
    auto keys = [](const std::vector<TermPosting>& ps, bool sorted) {
        std::vector<Key> out;
        for (const TermPosting& p : ps)
            out.emplace_back(p.updated_us, p.uid_hi, p.uid_lo, p.title_tf, p.body_tf, p.positions);
        if (sorted) std::sort(out.begin(), out.end());  // postings_at: any order
        return out;
    };
    const std::vector<PostingNote> notes = {{100, 100, 7}, {101, 101, 7}, {201, 201, 7}, {202, 202, 7}};
    std::size_t alpha_seen = 0;
    auto same_as_uncached = [&](const std::string& stage) {
        for (const std::string term : {"alpha", "own101", "own201", "own202", "absent"}) {
            std::vector<TermPosting> viewed, viewed_at, plain, plain_at;
            for (int round = 0; round < 2; ++round) {  // the second from the cache
                reader.segments.begin_view(true);
                viewed.clear(), viewed_at.clear();
                reader.segments.term_postings(u, term, SearchFilter{}, 100, true, nullptr, viewed);
                reader.segments.postings_at(u, term, notes, viewed_at);
                reader.segments.end_view();
            }
            writer.segments.term_postings(u, term, SearchFilter{}, 100, true, nullptr, plain);
            writer.segments.postings_at(u, term, notes, plain_at);
            BOOST_CHECK_MESSAGE(keys(viewed, false) == keys(plain, false), stage << ": " << term);
            BOOST_CHECK_MESSAGE(keys(viewed_at, true) == keys(plain_at, true),
                                stage << ": postings_at " << term);
            if (term == "alpha") alpha_seen = viewed.size();
        }
    };
    add_segment(writer, u, 100);
    same_as_uncached("one segment");
    BOOST_CHECK_EQUAL(alpha_seen, 3u);
    add_segment(writer, u, 200);
    same_as_uncached("a second segment");
    BOOST_CHECK_EQUAL(alpha_seen, 6u);
    writer.write(u, [&] {
        BOOST_CHECK(writer.segments.remove_note(u, 101, 101, 7));
        SegmentBuilder none;
        writer.segments.flush(u, none);
    });
    same_as_uncached("a note dead");
    BOOST_CHECK_EQUAL(alpha_seen, 5u);
    const Built b = build(merger, u);
    detail::Segments::Publish done = detail::Segments::Publish::lost;
    merger.write(u, [&] { done = merger.segments.publish(u, b.id, b.inputs, b.notes); });
    BOOST_REQUIRE(done == detail::Segments::Publish::published);
    same_as_uncached("merged");
    std::vector<long long> hidden;
    merger.write(u, [&] { hidden = merger.segments.mark_hidden_dropping(u); });
    for (long long id : hidden) merger.write(u, [&] { merger.segments.delete_dropped(id); });
    same_as_uncached("inputs dropped");
    BOOST_CHECK_EQUAL(alpha_seen, 5u);
}

// A segment larger than a pack keeps a frequent term's blocks as rows of their own and its rare
// terms in term groups (index/segment_pack.hpp): every term reads as written, in and outside
// views, by term_postings, postings_at and the check's walk; a term the segment lacks reads
// nothing wherever it sorts among the groups' terms.
BOOST_FIXTURE_TEST_CASE(a_segment_of_rows_and_term_groups_reads_every_term, StoreFixture) {
    const long long u = user("grouped");
    const std::unique_ptr<Dialect> d = make_dialect(target.backend);
    Conn writer(target, *d), reader(target, *d);
    const long long n = 600;
    writer.write(u, [&] {
        SegmentBuilder b;
        for (long long i = 0; i < n; ++i) {
            std::vector<SegmentTerm> terms{SegmentTerm{"alpha", 1, 0, "0"}};
            if (i % 10 == 0) terms.push_back(SegmentTerm{"beta", 0, 1, "1"});
            terms.push_back(SegmentTerm{"own" + std::to_string(1000 + i), 0, 1, "1"});
            b.add(SegmentNote{1000 + i, 1000 + i, 7, 1000, 0, 1, 2}, terms);
        }
        writer.segments.flush(u, b);
    });
    long long alpha_rows = -1, groups = -1;
    std::string from = group_key(""), to = group_keys_end();
    writer.session << "SELECT " + d->count_star() + " FROM segment_blocks WHERE user_id = :u AND term = 'alpha'",
        soci::into(alpha_rows), soci::use(u, "u");
    writer.session << "SELECT " + d->count_star() + " FROM segment_blocks WHERE user_id = :u AND term >= :f AND "
                      "term < :t",
        soci::into(groups), soci::use(u, "u"), soci::use(from, "f"), soci::use(to, "t");
    BOOST_CHECK_EQUAL(alpha_rows, (n + 127) / 128);  // a row per block of 128 postings
    BOOST_CHECK_GE(groups, 2);                         // beta and the 600 own terms
    const std::vector<PostingNote> notes = {{1000, 1000, 7}, {1010, 1010, 7}, {1011, 1011, 7}, {1599, 1599, 7}};
    const std::vector<std::tuple<std::string, std::size_t, std::size_t>> want = {
        {"alpha", 600, 4}, {"beta", 60, 2}, {"own1000", 1, 1}, {"own1011", 1, 1}, {"own1300", 1, 0},
        {"own1599", 1, 1}, {"absent", 0, 0}, {"alphb", 0, 0}, {"own0999", 0, 0}, {"own1599z", 0, 0},
        {"zzz", 0, 0}, {"a", 0, 0}};
    for (const auto& [term, all_n, at_n] : want)
        for (bool view : {false, true}) {
            std::vector<TermPosting> all, at;
            if (view) reader.segments.begin_view(true);
            reader.segments.term_postings(u, term, SearchFilter{}, 1000, true, nullptr, all);
            reader.segments.postings_at(u, term, notes, at);
            if (view) reader.segments.end_view();
            BOOST_CHECK_MESSAGE(all.size() == all_n, term << (view ? " view" : "") << ": " << all.size() << " postings");
            BOOST_CHECK_MESSAGE(at.size() == at_n, term << (view ? " view" : "") << ": postings_at " << at.size());
            for (std::size_t i = 1; i < all.size(); ++i) BOOST_CHECK(candidate_before(all[i - 1], all[i]));
        }
    std::vector<std::string> problems;
    std::size_t walked = 0;
    reader.segments.each_posting(u, [&](const std::string&, const SegmentNote&, const SegmentPosting&) { ++walked; },
                                 problems);
    BOOST_CHECK(problems.empty());
    BOOST_CHECK_EQUAL(walked, static_cast<std::size_t>(n + n / 10 + n));
}

// A segment stored as a pack reads as one whose blocks are rows, in and outside views (term
// reads, postings_at, the check's walk), and a merge reads it as its input; beside a segment of
// rows, each read takes each side's postings once.
BOOST_FIXTURE_TEST_CASE(a_packed_segment_reads_as_its_rows_would, StoreFixture) {
    const long long u = user("packed");
    const std::unique_ptr<Dialect> d = make_dialect(target.backend);
    Conn writer(target, *d), reader(target, *d);
    add_segment(writer, u, 100);         // rows
    add_packed_segment(writer, u, 200);  // one pack
    long long rows = -1, pack_rows = -1;
    writer.session << "SELECT " + d->count_star() + " FROM segment_blocks WHERE user_id = :u",
        soci::into(rows), soci::use(u, "u");
    writer.session << "SELECT " + d->count_star() + " FROM segment_blocks WHERE user_id = :u AND term = ''",
        soci::into(pack_rows), soci::use(u, "u");
    BOOST_CHECK_EQUAL(rows, 1 + 1);  // alpha and three own terms, in one term group; the pack
    BOOST_CHECK_EQUAL(pack_rows, 1);
    const std::vector<detail::SegmentRef> listed = reader.segments.of_user(u);
    BOOST_REQUIRE_EQUAL(listed.size(), 2u);
    BOOST_CHECK(!listed[0].pack);
    BOOST_REQUIRE(listed[1].pack);
    BOOST_CHECK_EQUAL(listed[1].pack->terms(), 4u);
    const std::vector<PostingNote> notes = {{100, 100, 7}, {101, 101, 7}, {201, 201, 7}, {202, 202, 7}};
    const std::vector<long long> all_notes = {100, 101, 102, 200, 201, 202};
    std::vector<long long> dead;
    auto check = [&](const std::string& stage) {
        auto live = [&](long long n) { return std::find(dead.begin(), dead.end(), n) == dead.end(); };
        for (const std::string term : {"alpha", "own101", "own201", "own202", "absent", ""}) {
            std::size_t want = 0, want_at = 0;
            for (long long n : all_notes) {
                if (!live(n) || !(term == "alpha" || term == "own" + std::to_string(n))) continue;
                ++want;
                if (std::any_of(notes.begin(), notes.end(), [&](const PostingNote& p) { return p.updated_us == n; }))
                    ++want_at;
            }
            for (bool view : {false, true}) {
                std::vector<TermPosting> all, at;
                if (view) reader.segments.begin_view(true);
                reader.segments.term_postings(u, term, SearchFilter{}, 100, true, nullptr, all);
                reader.segments.postings_at(u, term, notes, at);
                if (view) reader.segments.end_view();
                BOOST_CHECK_MESSAGE(all.size() == want, stage << (view ? " view " : " ") << term << ": "
                                                               << all.size() << " postings");
                BOOST_CHECK_MESSAGE(at.size() == want_at, stage << (view ? " view " : " ") << "postings_at "
                                                                << term << ": " << at.size());
                for (std::size_t i = 1; i < all.size(); ++i) BOOST_CHECK(candidate_before(all[i - 1], all[i]));
                for (const TermPosting& p : all) BOOST_CHECK_EQUAL(p.positions, term == "alpha" ? "0" : "1");
            }
        }
        std::vector<std::string> problems;
        std::size_t walked = 0;
        reader.segments.each_posting(u, [&](const std::string&, const SegmentNote&, const SegmentPosting&) {
            ++walked;
        }, problems);
        BOOST_CHECK_MESSAGE(problems.empty(), stage << ": " << (problems.empty() ? "" : problems.front()));
        BOOST_CHECK_EQUAL(walked, 2 * (all_notes.size() - dead.size()));
    };
    check("rows and a pack");
    writer.write(u, [&] {
        BOOST_CHECK(writer.segments.remove_note(u, 201, 201, 7));  // dead in the pack
        SegmentBuilder none;
        writer.segments.flush(u, none);
    });
    dead.push_back(201);
    check("a packed note dead");
    // a merge reads both inputs; its output, small, becomes a pack too when written as one
    const std::vector<detail::SegmentRef> inputs = writer.segments.of_user(u);
    std::vector<SegmentInput> in;
    for (const detail::SegmentRef& r : inputs) in.push_back(writer.segments.input_of(r));
    BOOST_REQUIRE_EQUAL(in.size(), 2u);
    BOOST_CHECK_EQUAL(in[1].blocks.size(), 4u);
    BOOST_CHECK_EQUAL(in[1].blocks.front().first, "alpha");
    std::vector<SegmentBlock> blocks;
    const std::string table = merge_segments(in, [&](SegmentBlock&& b) { blocks.push_back(std::move(b)); });
    BOOST_CHECK_EQUAL(blocks.size(), 6u);  // alpha and five own terms: own201 is dead
}

BOOST_FIXTURE_TEST_CASE(publish_loses_when_its_inputs_or_row_went_away, StoreFixture) {
    const long long u = user("merge-lost");
    const std::unique_ptr<Dialect> d = make_dialect(target.backend);
    Conn merger(target, *d), other(target, *d);
    add_segment(other, u, 100);
    add_segment(other, u, 200);
    // another process's cleanup (drop_interrupted_merges) takes the unpublished row
    Built b = build(merger, u);
    other.write(u, [&] { BOOST_CHECK_EQUAL(other.segments.mark_hidden_dropping(u).size(), 1u); });
    detail::Segments::Publish done = detail::Segments::Publish::published;
    merger.write(u, [&] { done = merger.segments.publish(u, b.id, b.inputs, b.notes); });
    BOOST_CHECK(done == detail::Segments::Publish::lost);
    BOOST_CHECK_EQUAL(other.segments.of_user(u).size(), 2u);
    BOOST_CHECK_EQUAL(postings(other, u, "alpha").size(), 6u);
    // another merge took an input first
    b = build(merger, u);
    const Built first = build(other, u);
    other.write(u, [&] { other.segments.publish(u, first.id, first.inputs, first.notes); });
    merger.write(u, [&] { done = merger.segments.publish(u, b.id, b.inputs, b.notes); });
    BOOST_CHECK(done == detail::Segments::Publish::lost);
    const std::vector<detail::SegmentRef> now = merger.segments.of_user(u);
    BOOST_REQUIRE_EQUAL(now.size(), 1u);
    BOOST_CHECK_EQUAL(now[0].id, first.id);
    BOOST_CHECK_EQUAL(postings(merger, u, "alpha").size(), 6u);
}

// A retired segment loses its blocks range after range (more blocks than one transaction
// takes): after the compaction no block of a dropped segment is left, on every backend, and the
// merged segment answers for every word of both inputs.
BOOST_FIXTURE_TEST_CASE(retired_segments_lose_every_block_in_ranges, StoreFixture) {
    const long long u = user("drop-ranges");
    for (int b = 0; b < 6; ++b) {  // six segments of 1,280 distinct words each
        std::vector<NoteInput> batch;
        for (int i = 0; i < 64; ++i) {
            NoteInput n = plain_note("drop batch " + std::to_string(b) + " note " + std::to_string(i));
            n.plain_text.clear();
            for (int w = 0; w < 20; ++w)
                n.plain_text += "q" + std::to_string(b) + "x" + std::to_string(i * 20 + w) + " ";
            batch.push_back(n);
        }
        store->write_batch(u, {}, batch);
    }
    const IndexCompaction c = store->compact_index(u);
    BOOST_CHECK_GE(c.merged_segments, 2);
    auto db = raw();
    long long orphans = -1, segments = -1;
    *db << "SELECT COUNT(*) FROM segment_blocks b WHERE b.user_id = :u AND NOT EXISTS (SELECT 1 "
           "FROM index_segments s WHERE s.id = b.segment_id)",
        soci::into(orphans), soci::use(u, "u");
    BOOST_CHECK_EQUAL(orphans, 0);
    *db << "SELECT COUNT(*) FROM index_segments WHERE user_id = :u", soci::into(segments), soci::use(u, "u");
    BOOST_CHECK_EQUAL(segments, c.segments);
    const std::unique_ptr<Dialect> d = make_dialect(target.backend);
    Conn reader(target, *d);
    for (const char* word : {"q0x0", "q0x1279", "q1x0", "q3x600", "q5x1279"})
        BOOST_CHECK_EQUAL(postings(reader, u, word).size(), 1u);
    BOOST_CHECK(store->check_user(u).empty());
}

// An import batch's segment is built before its transaction (prepare_batch) on the assumption
// that every note is new; batches with stored, trashed or repeated notes are indexed the usual
// way, batches of new notes with the prebuilt segment, and all leave the index exact.
BOOST_FIXTURE_TEST_CASE(a_prepared_batch_is_indexed_exactly_with_or_without_its_prebuilt_segment,
                        StoreFixture) {
    const long long u = user("prebuilt");
    auto batch_of = [](int first, int count) {
        std::vector<NoteInput> batch;
        for (int i = first; i < first + count; ++i) {
            NoteInput n = plain_note("prebuilt note " + std::to_string(i));
            n.plain_text = "common own" + std::to_string(i);
            batch.push_back(n);
        }
        return batch;
    };
    std::vector<NoteInput> stored = batch_of(0, 64);
    store->write_batch(u, {}, stored);
    std::vector<NoteInput> fresh = batch_of(100, 64);  // all new: the prebuilt segment
    std::vector<WriteOutcome> out = store->write_prepared(u, {}, *store->prepare_batch(fresh));
    BOOST_CHECK(std::count(out.begin(), out.end(), WriteOutcome::Inserted) == 64);
    std::vector<NoteInput> mixed = batch_of(200, 80);  // a stored note changed in the middle
    NoteInput changed = stored[5];
    changed.plain_text = "common replaced5";
    changed.updated_us = 9;
    mixed.insert(mixed.begin() + 40, changed);
    mixed.insert(mixed.begin() + 60, stored[6]);  // and one unchanged
    out = store->write_prepared(u, {}, *store->prepare_batch(mixed));
    BOOST_CHECK(std::count(out.begin(), out.end(), WriteOutcome::Inserted) == 80);
    BOOST_CHECK(out[40] == WriteOutcome::Updated);
    BOOST_CHECK(out[60] == WriteOutcome::Unchanged);
    const std::unique_ptr<Dialect> d = make_dialect(target.backend);
    Conn reader(target, *d);
    for (const char* word : {"own0", "own63", "own100", "own163", "own200", "own279", "replaced5", "own6"})
        BOOST_CHECK_MESSAGE(postings(reader, u, word).size() == 1u, word);
    BOOST_CHECK(postings(reader, u, "own5").empty());
    // an unchanged stored note first, a trashed one, and a new note twice (changed the second time)
    BOOST_REQUIRE(store->trash_note(u, stored[8].id, 50));
    std::vector<NoteInput> more = batch_of(300, 70);
    more.insert(more.begin(), stored[7]);
    more.push_back(stored[8]);
    NoteInput again = more[10];
    again.plain_text = "common again310";
    more.push_back(again);
    out = store->write_prepared(u, {}, *store->prepare_batch(more));
    BOOST_CHECK(out[0] == WriteOutcome::Unchanged);
    BOOST_CHECK(out[71] == WriteOutcome::Unchanged);  // stays in the trash
    BOOST_CHECK(out[72] == WriteOutcome::Updated);
    BOOST_CHECK(std::count(out.begin(), out.end(), WriteOutcome::Inserted) == 70);
    for (const char* word : {"own300", "own369", "again310", "own7"})
        BOOST_CHECK_MESSAGE(postings(reader, u, word).size() == 1u, word);
    BOOST_CHECK(postings(reader, u, "own309").empty());  // more[10]'s first version
    BOOST_CHECK(postings(reader, u, "own8").empty());    // in the trash
    // all new again: without a prebuilt segment (the batch before was not all new), then with
    for (int first : {400, 500}) {
        out = store->write_prepared(u, {}, *store->prepare_batch(batch_of(first, 64)));
        BOOST_CHECK(std::count(out.begin(), out.end(), WriteOutcome::Inserted) == 64);
        for (int i : {first, first + 63})
            BOOST_CHECK_EQUAL(postings(reader, u, "own" + std::to_string(i)).size(), 1u);
    }
    BOOST_CHECK(store->check_user(u).empty());
}

// A dropping segment's blocks are cut into runs of about n blocks on term boundaries, and each
// run's delete takes that segment's blocks of the run and nothing of another segment.
BOOST_FIXTURE_TEST_CASE(block_cuts_split_a_segment_into_ranges_deleted_alone, StoreFixture) {
    const long long u = user("block-cuts");
    const std::unique_ptr<Dialect> d = make_dialect(target.backend);
    Conn c(target, *d);
    c.write(u, [&] {
        SegmentBuilder b;
        std::vector<SegmentTerm> terms;
        // each term's block large enough to be a row of its own (not in a term group)
        std::vector<int> body;
        for (int k = 0; k < 40; ++k) body.push_back(3 * k);
        for (int i = 10; i < 50; ++i)
            terms.push_back(SegmentTerm{"t" + std::to_string(i), 0, 40, encode_positions({}, body)});
        for (long long n = 0; n < 60; ++n) b.add(SegmentNote{100 + n, 100 + n, 7, 100, 0, 1, 1600}, terms);
        c.segments.flush(u, b);
    });
    add_segment(c, u, 200);
    const std::vector<detail::SegmentRef> segs = c.segments.of_user(u);
    BOOST_REQUIRE_EQUAL(segs.size(), 2u);
    const long long big = segs[0].id, other = segs[1].id;
    const std::vector<std::string> cuts = c.segments.block_cuts(big, 10, 1 << 20);
    const std::vector<std::string> want{"t20", "t30", "t40"};
    BOOST_CHECK_EQUAL_COLLECTIONS(cuts.begin(), cuts.end(), want.begin(), want.end());
    c.write(u, [&] {
        std::string from;
        for (const std::string& to : cuts) {
            c.segments.delete_blocks(big, from, to);
            from = to;
        }
    });
    std::vector<std::string> left;
    std::string term;
    long long id = big, others = -1;
    soci::statement st = (c.session.prepare << "SELECT term FROM segment_blocks WHERE segment_id = :s ORDER BY term",
                          soci::into(term), soci::use(id, "s"));
    st.execute();
    while (st.fetch()) left.push_back(term);
    BOOST_REQUIRE_EQUAL(left.size(), 10u);  // the last run, t40 .. t49
    BOOST_CHECK_EQUAL(left.front(), "t40");
    BOOST_CHECK_EQUAL(left.back(), "t49");
    c.session << "SELECT " + d->count_star() + " FROM segment_blocks WHERE segment_id = :s", soci::into(others),
        soci::use(other, "s");
    BOOST_CHECK_EQUAL(others, 1);  // alpha and three own terms, in one term group
}

// A new SQLite file is created with 16 KiB pages and auto_vacuum=INCREMENTAL, and compact_index
// gives the pages its merges freed back to the file system (an import's file was a third free
// pages before).
BOOST_FIXTURE_TEST_CASE(compact_gives_freed_pages_back_on_sqlite, StoreFixture) {
    if (!sqlite()) return;  // the servers manage their own space
    const long long u = user("vacuum");
    for (int b = 0; b < 6; ++b) {  // six batches: six segments, merged by the compaction
        std::vector<NoteInput> batch;
        for (int i = 0; i < 64; ++i) {
            NoteInput n = plain_note("batch " + std::to_string(b) + " note " + std::to_string(i));
            n.plain_text = "words of the body " + std::to_string(i) + " and more words";
            batch.push_back(n);
        }
        store->write_batch(u, {}, batch);
    }
    auto db = raw();
    long long mode = -1, free_pages = -1, page_bytes = -1;
    *db << "PRAGMA auto_vacuum", soci::into(mode);
    BOOST_CHECK_EQUAL(mode, 2);  // incremental
    *db << "PRAGMA page_size", soci::into(page_bytes);
    BOOST_CHECK_EQUAL(page_bytes, SociStore::kNewFilePageBytes);
    const IndexCompaction c = store->compact_index(u);
    BOOST_CHECK_GE(c.merged_segments, 2);
    *db << "PRAGMA freelist_count", soci::into(free_pages);
    BOOST_CHECK_EQUAL(free_pages, 0);
    BOOST_CHECK(store->check_user(u).empty());
}

// A file created before new files got 16 KiB pages keeps its 4 KiB ones (SQLite fixes the size
// with the first page; doc/upgrading.md converts it): notesd migrates, writes, compacts and
// checks it as before.
BOOST_FIXTURE_TEST_CASE(an_older_file_keeps_its_4_kib_pages, StoreFixture) {
    if (!sqlite()) return;
    const std::string file = dir + "/older.db";
    {
        soci::session s(make_dialect(Backend::Sqlite)->factory(), "db=" + file);
        s << "PRAGMA page_size=4096";
        s << "PRAGMA journal_mode=WAL";  // writes the file's first page
    }
    long long page_bytes = -1, notes = -1;
    {
        std::unique_ptr<Store> older = open_store("sqlite3://db=" + file);
        older->migrate();
        const long long u = older->add_user("older", 1000);
        for (int b = 0; b < 3; ++b) {
            std::vector<NoteInput> batch;
            for (int i = 0; i < 64; ++i) {
                NoteInput n = plain_note("older " + std::to_string(b) + " note " + std::to_string(i));
                n.content.append(3000, 'x');  // a row of most of a 4 KiB page
                batch.push_back(n);
            }
            older->write_batch(u, {}, batch);
        }
        older->compact_index(u);
        BOOST_CHECK(older->check_user(u).empty());
        soci::session s(make_dialect(Backend::Sqlite)->factory(), "db=" + file);
        s << "PRAGMA page_size", soci::into(page_bytes);
        s << "SELECT COUNT(*) FROM notes", soci::into(notes);
    }
    BOOST_CHECK_EQUAL(page_bytes, 4096);
    BOOST_CHECK_EQUAL(notes, 192);
    remove_sqlite_files(file);
}

BOOST_AUTO_TEST_SUITE_END()

// Each write transaction of an index step is announced before its BEGIN and after its end (the
// merger computes at a low priority and takes its own back while it may hold the lock,
// server/merger_priority.hpp): every one of them, never nested, on every backend.
BOOST_FIXTURE_TEST_CASE(step_writes_are_announced_around_each_transaction, StoreFixture) {
    struct Counting : StepWriteListener {
        long long before = 0, after = 0;
        bool inside = false, nested = false;
        void before_write() override {
            nested = nested || inside;
            inside = true;
            ++before;
        }
        void after_write() override {
            inside = false;
            ++after;
        }
    } listener;
    const long long u = user("listened");
    for (int b = 0; b < 3; ++b) {
        std::vector<NoteInput> batch;
        for (int i = 0; i < 64; ++i)
            batch.push_back(plain_note("listened batch " + std::to_string(b) + " note " + std::to_string(i)));
        store->write_batch(u, {}, batch);
    }
    store->listen_to_step_writes(&listener);
    MergePolicy p;
    p.force = true;
    p.max_segments = 1;
    const IndexStep s = store->run_index_step(u, plan_merge(p, store->index_state(u), 0, 0));
    BOOST_CHECK_EQUAL(s.merged_segments, 3);
    BOOST_CHECK_GE(s.write_transactions, 4);  // begin, blocks, notes, publish, the drops
    BOOST_CHECK_EQUAL(listener.before, s.write_transactions);
    BOOST_CHECK_EQUAL(listener.after, listener.before);
    BOOST_CHECK(!listener.inside);
    BOOST_CHECK(!listener.nested);
    store->listen_to_step_writes(nullptr);
    store->compact_index(u);
    BOOST_CHECK_EQUAL(listener.before, s.write_transactions);  // no one listens any more
    BOOST_CHECK(store->check_user(u).empty());
}
