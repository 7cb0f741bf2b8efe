#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "index/positions.hpp"
#include "index/segment.hpp"
#include "index/segment_pack.hpp"
#include <optional>

using namespace notesd;

namespace {

// A random batch: notes with random keys (some sharing a time) and terms from a small
// vocabulary, so frequent terms span several blocks.
struct Batch {
    SegmentNotes notes;
    std::vector<std::vector<SegmentTerm>> terms;
};

Batch random_batch(unsigned seed, int n_notes, long long time_base = 1700000000000000LL) {
    std::mt19937_64 rng(seed);
    Batch b;
    for (int i = 0; i < n_notes; ++i) {
        SegmentNote n;
        n.updated_us = time_base + static_cast<long long>(rng() % 5000) * 1000;  // ties happen
        n.uid_hi = static_cast<long long>(rng());
        n.uid_lo = static_cast<long long>(rng());
        n.created_us = n.updated_us - static_cast<long long>(rng() % 3) * 86400000000LL;
        n.flags = static_cast<long long>(rng() % 16);
        n.title_len = static_cast<long long>(rng() % 12);
        n.body_len = 1 + static_cast<long long>(rng() % 4000);
        std::map<std::string, SegmentTerm> distinct;
        const int words = 1 + static_cast<int>(rng() % 40);
        for (int w = 0; w < words; ++w) {
            const int rank = static_cast<int>(rng() % 300) * static_cast<int>(rng() % 300) / 300;
            SegmentTerm& t = distinct["w" + std::to_string(rank)];
            t.term = "w" + std::to_string(rank);
            (rng() % 5 == 0 ? t.title_tf : t.body_tf) += 1;
        }
        std::vector<SegmentTerm> ts;
        for (auto& [_, t] : distinct) {
            std::vector<int> tp, bp;
            for (int k = 0; k < t.title_tf; ++k) tp.push_back(k * 2);
            for (int k = 0; k < t.body_tf; ++k) bp.push_back(k * 3 + 1);
            t.pos = encode_positions(tp, bp);
            ts.push_back(t);
        }
        b.notes.push_back(n);
        b.terms.push_back(ts);
    }
    return b;
}

// What the postings rows would return for each term: every note holding it, in candidate order.
std::map<std::string, std::vector<TermPosting>> expected(const Batch& b, const std::vector<bool>* dead = nullptr) {
    std::map<std::string, std::vector<std::pair<SegmentNote, SegmentTerm>>> by_term;
    for (std::size_t i = 0; i < b.notes.size(); ++i)
        if (!dead || !(*dead)[i])
            for (const SegmentTerm& t : b.terms[i]) by_term[t.term].emplace_back(b.notes[i], t);
    std::map<std::string, std::vector<TermPosting>> out;
    for (auto& [term, list] : by_term) {
        std::sort(list.begin(), list.end(), [](const auto& x, const auto& y) { return x.first.before(y.first); });
        for (const auto& [n, t] : list)
            out[term].push_back(TermPosting{n.uid_hi, n.uid_lo, n.updated_us, static_cast<int>(t.title_tf),
                                            static_cast<int>(t.body_tf), static_cast<int>(n.title_len),
                                            static_cast<int>(n.body_len), t.pos});
    }
    return out;
}

struct Built {
    std::string notes_blob;
    std::vector<SegmentBlock> blocks;
};

Built build(const Batch& b) {
    SegmentBuilder builder;
    for (std::size_t i = 0; i < b.notes.size(); ++i) builder.add(b.notes[i], b.terms[i]);
    Built out;
    out.notes_blob = builder.finish([&](SegmentBlock&& blk) { out.blocks.push_back(std::move(blk)); });
    return out;
}

std::map<std::string, std::vector<TermPosting>> read_all(const Built& s, const LiveDocs* live_in = nullptr) {
    SegmentNotes notes;
    BOOST_REQUIRE(decode_segment_notes(s.notes_blob, notes));
    const LiveDocs live = live_in ? *live_in : LiveDocs(static_cast<long long>(notes.size()));
    std::map<std::string, std::vector<TermPosting>> out;
    for (const SegmentBlock& blk : s.blocks) {
        std::vector<TermPosting>& list = out[blk.term];
        BOOST_REQUIRE(decode_segment_block(blk.data, notes, live, true, list));
        if (list.empty()) out.erase(blk.term);
    }
    return out;
}

bool same(const std::map<std::string, std::vector<TermPosting>>& a,
          const std::map<std::string, std::vector<TermPosting>>& b) {
    if (a.size() != b.size()) return false;
    for (const auto& [term, list] : a) {
        auto it = b.find(term);
        if (it == b.end() || it->second.size() != list.size()) return false;
        for (std::size_t i = 0; i < list.size(); ++i) {
            const TermPosting &x = list[i], &y = it->second[i];
            if (x.uid_hi != y.uid_hi || x.uid_lo != y.uid_lo || x.updated_us != y.updated_us ||
                x.title_tf != y.title_tf || x.body_tf != y.body_tf || x.title_len != y.title_len ||
                x.body_len != y.body_len || x.positions != y.positions)
                return false;
        }
    }
    return true;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(segment)

BOOST_AUTO_TEST_CASE(a_built_segment_reads_as_the_postings_rows_in_candidate_order) {
    const Batch b = random_batch(1, 1000);
    const Built s = build(b);
    BOOST_CHECK(same(read_all(s), expected(b)));
    // blocks: terms ascending, each term's blocks full but the last, bounds true to the data
    SegmentNotes notes;
    BOOST_REQUIRE(decode_segment_notes(s.notes_blob, notes));
    BOOST_CHECK_EQUAL(notes.size(), 1000u);
    std::size_t multi_block_terms = 0;
    for (std::size_t i = 0; i < s.blocks.size(); ++i) {
        const SegmentBlock& blk = s.blocks[i];
        const bool last_of_term = i + 1 == s.blocks.size() || s.blocks[i + 1].term != blk.term;
        if (i > 0) BOOST_CHECK(s.blocks[i - 1].term <= blk.term);
        if (!last_of_term) {
            BOOST_CHECK_EQUAL(blk.bounds.n, static_cast<long long>(kSegmentBlockPostings));
            BOOST_CHECK_LT(blk.bounds.last, s.blocks[i + 1].bounds.first);
            if (i == 0 || s.blocks[i - 1].term != blk.term) ++multi_block_terms;
        }
        SegmentBlockBounds header;
        BOOST_REQUIRE(read_block_bounds(blk.data, header));
        BOOST_CHECK_EQUAL(header.n, blk.bounds.n);
        BOOST_CHECK_EQUAL(header.first, blk.bounds.first);
        BOOST_CHECK_EQUAL(header.last, blk.bounds.last);
        long long max_tt = 0, max_bt = 0, min_tl = 1LL << 40, min_bl = 1LL << 40, count = 0;
        BOOST_REQUIRE(each_segment_posting(blk.data, static_cast<long long>(notes.size()), [&](const SegmentPosting& p) {
            const SegmentNote& n = notes[static_cast<std::size_t>(p.ordinal)];
            max_tt = std::max(max_tt, p.title_tf);
            max_bt = std::max(max_bt, p.body_tf);
            min_tl = std::min(min_tl, n.title_len);
            min_bl = std::min(min_bl, n.body_len);
            ++count;
            return true;
        }));
        BOOST_CHECK_EQUAL(count, header.n);
        BOOST_CHECK_EQUAL(max_tt, header.max_title_tf);
        BOOST_CHECK_EQUAL(max_bt, header.max_body_tf);
        BOOST_CHECK_EQUAL(min_tl, header.min_title_len);
        BOOST_CHECK_EQUAL(min_bl, header.min_body_len);
    }
    BOOST_CHECK_GT(multi_block_terms, 5u);
}

BOOST_AUTO_TEST_CASE(a_note_added_twice_keeps_its_last_version) {
    Batch b = random_batch(2, 50);
    SegmentBuilder builder;
    for (std::size_t i = 0; i < b.notes.size(); ++i) builder.add(b.notes[i], b.terms[i]);
    // note 7 rewritten: a new time and other terms
    SegmentNote again = b.notes[7];
    again.updated_us += 123456789;
    std::vector<SegmentTerm> terms = {SegmentTerm{"only", 1, 0, "0;"}};
    builder.add(again, terms);
    BOOST_CHECK_EQUAL(builder.notes(), 50u);
    const auto got_notes = builder.term_notes();
    Built s;
    s.notes_blob = builder.finish([&](SegmentBlock&& blk) { s.blocks.push_back(std::move(blk)); });
    b.notes[7] = again;
    b.terms[7] = terms;
    // term_notes counts the notes holding each term, the replaced version not among them (a
    // term only it held is not listed).
    std::map<std::string, int> want;
    for (const auto& ts : b.terms)
        for (const SegmentTerm& t : ts) ++want[t.term];
    const std::map<std::string, int> got(got_notes.begin(), got_notes.end());
    BOOST_CHECK(got == want);
    BOOST_CHECK_EQUAL(got_notes.size(), want.size());
    BOOST_CHECK(same(read_all(s), expected(b)));
    BOOST_CHECK(builder.empty());
}

BOOST_AUTO_TEST_CASE(dead_notes_are_not_read_and_a_merge_drops_them) {
    const Batch a = random_batch(3, 400, 1700000000000000LL);
    const Batch b = random_batch(4, 300, 1700000003000000LL);  // overlapping time ranges
    const Built sa = build(a), sb = build(b);
    std::vector<SegmentInput> inputs(2);
    std::vector<bool> dead_a(a.notes.size()), dead_b(b.notes.size());
    for (auto* x : {&sa, &sb}) {
        SegmentInput& in = inputs[x == &sa ? 0 : 1];
        BOOST_REQUIRE(decode_segment_notes(x->notes_blob, in.notes));
        in.live = LiveDocs(static_cast<long long>(in.notes.size()));
        for (const SegmentBlock& blk : x->blocks) in.blocks.emplace_back(blk.term, blk.data);
    }
    // every third note of a and every fifth of b deleted (by key, as the store would)
    for (std::size_t i = 0; i < a.notes.size(); i += 3) {
        const long long o = find_ordinal(inputs[0].notes, a.notes[i].updated_us, a.notes[i].uid_hi, a.notes[i].uid_lo);
        BOOST_REQUIRE_GE(o, 0);
        BOOST_CHECK(inputs[0].live.remove(o));
        BOOST_CHECK(!inputs[0].live.remove(o));  // already dead
        dead_a[i] = true;
    }
    for (std::size_t i = 0; i < b.notes.size(); i += 5) {
        BOOST_CHECK(inputs[1].live.remove(find_ordinal(inputs[1].notes, b.notes[i].updated_us, b.notes[i].uid_hi, b.notes[i].uid_lo)));
        dead_b[i] = true;
    }
    BOOST_CHECK_EQUAL(inputs[0].live.live_count(), 400 - 134);
    BOOST_CHECK_EQUAL(find_ordinal(inputs[0].notes, 1, 2, 3), -1);
    // the live set survives its encoding
    LiveDocs back;
    BOOST_REQUIRE(LiveDocs::decode(inputs[0].live.encode(), 400, back));
    BOOST_CHECK_EQUAL(back.live_count(), inputs[0].live.live_count());
    BOOST_CHECK(!LiveDocs::decode(inputs[0].live.encode(), 401, back));
    BOOST_CHECK(!LiveDocs::decode(std::string(50, '\xff'), 397, back));  // bits past the end
    BOOST_CHECK(same(read_all(sa, &inputs[0].live), expected(a, &dead_a)));
    // the merge holds exactly the live postings of both
    Built merged;
    merged.notes_blob = merge_segments(inputs, [&](SegmentBlock&& blk) { merged.blocks.push_back(std::move(blk)); });
    Batch both = a;
    std::vector<bool> dead = dead_a;
    both.notes.insert(both.notes.end(), b.notes.begin(), b.notes.end());
    both.terms.insert(both.terms.end(), b.terms.begin(), b.terms.end());
    dead.insert(dead.end(), dead_b.begin(), dead_b.end());
    BOOST_CHECK(same(read_all(merged), expected(both, &dead)));
}

// merge_segments merges each input's ascending run of a term pairwise: an odd number of inputs
// with interleaved time ranges, one of them empty of live notes, gives the same postings as
// one segment built from every note.
BOOST_AUTO_TEST_CASE(a_merge_of_many_inputs_equals_one_build_of_all_their_notes) {
    std::vector<Batch> batches;
    std::vector<Built> built;
    for (unsigned k = 0; k < 7; ++k) {
        batches.push_back(random_batch(20 + k, 150 + 40 * static_cast<int>(k), 1700000000000000LL + k * 700000LL));
        built.push_back(build(batches.back()));
    }
    std::vector<SegmentInput> inputs(batches.size());
    Batch all;
    std::vector<bool> dead;
    for (std::size_t k = 0; k < batches.size(); ++k) {
        BOOST_REQUIRE(decode_segment_notes(built[k].notes_blob, inputs[k].notes));
        inputs[k].live = LiveDocs(static_cast<long long>(inputs[k].notes.size()));
        for (const SegmentBlock& blk : built[k].blocks) inputs[k].blocks.emplace_back(blk.term, blk.data);
        for (std::size_t i = 0; i < batches[k].notes.size(); ++i) {
            const bool gone = k == 3 || i % 4 == 1;  // input 3 entirely deleted
            if (gone) {
                const SegmentNote& n = batches[k].notes[i];
                BOOST_REQUIRE(inputs[k].live.remove(find_ordinal(inputs[k].notes, n.updated_us, n.uid_hi, n.uid_lo)));
            }
            dead.push_back(gone);
        }
        all.notes.insert(all.notes.end(), batches[k].notes.begin(), batches[k].notes.end());
        all.terms.insert(all.terms.end(), batches[k].terms.begin(), batches[k].terms.end());
    }
    Built merged;
    merged.notes_blob = merge_segments(inputs, [&](SegmentBlock&& blk) { merged.blocks.push_back(std::move(blk)); });
    BOOST_CHECK(same(read_all(merged), expected(all, &dead)));
    // Merged by term ranges on threads: the same notes table and the same blocks in the same order.
    for (unsigned threads : {2u, 3u, 64u}) {
        Built by_ranges;
        by_ranges.notes_blob = merge_segments(
            inputs, [&](SegmentBlock&& blk) { by_ranges.blocks.push_back(std::move(blk)); }, threads);
        BOOST_CHECK(by_ranges.notes_blob == merged.notes_blob);
        BOOST_REQUIRE_EQUAL(by_ranges.blocks.size(), merged.blocks.size());
        for (std::size_t i = 0; i < merged.blocks.size(); ++i) {
            BOOST_CHECK_EQUAL(by_ranges.blocks[i].term, merged.blocks[i].term);
            BOOST_CHECK(by_ranges.blocks[i].data == merged.blocks[i].data);
        }
    }
    // A malformed block in a later range, or a sink that fails, ends the threaded merge with the
    // error (its threads joined), as the plain merge does.
    std::vector<SegmentInput> bad = inputs;
    bad[0].blocks.back().second = "x";
    BOOST_CHECK_THROW(merge_segments(bad, [](SegmentBlock&&) {}, 3), std::runtime_error);
    std::size_t taken = 0;
    BOOST_CHECK_THROW(merge_segments(inputs, [&](SegmentBlock&&) {
        if (++taken == merged.blocks.size() / 2) throw std::logic_error("sink full");
    }, 2), std::logic_error);
}

BOOST_AUTO_TEST_CASE(malformed_data_is_refused_not_read) {
    const Built s = build(random_batch(5, 200));
    SegmentNotes notes;
    BOOST_REQUIRE(decode_segment_notes(s.notes_blob, notes));
    const LiveDocs live(static_cast<long long>(notes.size()));
    const std::string& blk = s.blocks.front().data;
    std::vector<TermPosting> out;
    // every truncation of a block and of the notes table is refused
    for (std::size_t cut = 0; cut < blk.size(); ++cut) {
        BOOST_CHECK(!decode_segment_block(blk.substr(0, cut), notes, live, true, out));
        BOOST_CHECK(out.empty());
    }
    for (std::size_t cut = 0; cut < s.notes_blob.size(); cut += 7) {
        SegmentNotes n2;
        BOOST_CHECK(!decode_segment_notes(s.notes_blob.substr(0, cut), n2));
    }
    // a block naming notes the table does not have, or trailing bytes
    BOOST_CHECK(!decode_segment_block(blk, SegmentNotes(notes.begin(), notes.begin() + 1), LiveDocs(1), true, out));
    BOOST_CHECK(!decode_segment_block(blk + "x", notes, live, true, out));
    // any single flipped byte either is refused or still decodes within the table (no crash)
    for (std::size_t i = 0; i < blk.size(); ++i) {
        std::string bad = blk;
        bad[i] = static_cast<char>(bad[i] ^ 0x5a);
        out.clear();
        decode_segment_block(bad, notes, live, true, out);
        BOOST_CHECK_LE(out.size(), kSegmentBlockPostings);
    }
    // the writer refuses what the format cannot hold
    SegmentNotes unordered = {notes[1], notes[0]};
    BOOST_CHECK_THROW(encode_segment_notes(unordered), std::invalid_argument);
    SegmentBlockBounds b;
    BOOST_CHECK_THROW(encode_segment_block({}, notes, b), std::invalid_argument);
    BOOST_CHECK_THROW(encode_segment_block({SegmentPosting{3, 1, 0, ""}, SegmentPosting{3, 1, 0, ""}}, notes, b),
                      std::invalid_argument);
    BOOST_CHECK_THROW(encode_segment_block({SegmentPosting{static_cast<long long>(notes.size()), 1, 0, ""}}, notes, b),
                      std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(a_segment_is_a_fraction_of_the_row_formats_size) {
    const Batch b = random_batch(6, 1000);
    const Built s = build(b);
    std::size_t postings = 0, bytes = s.notes_blob.size();
    for (const SegmentBlock& blk : s.blocks) {
        postings += static_cast<std::size_t>(blk.bounds.n);
        bytes += blk.data.size();
    }
    // packed_block.hpp's format 1 (the SQLite read copy) takes 37 bytes plus positions per
    // posting; a segment's postings share their note's fields
    BOOST_TEST_MESSAGE("segment bytes per posting: " << static_cast<double>(bytes) / static_cast<double>(postings));
    BOOST_CHECK_LT(bytes, postings * 16);
}

// A pack (segment_pack.hpp) holds exactly the blocks it was given: each term's blocks, in
// order, byte for byte, and nothing for a term the segment lacks.
BOOST_AUTO_TEST_CASE(a_pack_gives_back_every_term_s_blocks) {
    const Built s = build(random_batch(7, 300));
    SegmentPack pack;
    BOOST_REQUIRE(SegmentPack::decode(encode_segment_pack(s.blocks), pack));
    std::map<std::string, std::vector<const SegmentBlock*>> by_term;
    for (const SegmentBlock& blk : s.blocks) by_term[blk.term].push_back(&blk);
    BOOST_CHECK_EQUAL(pack.terms(), by_term.size());
    std::size_t multi = 0;
    for (const auto& [term, want] : by_term) {
        const std::vector<SegmentPack::Block> got = pack.term_blocks(term);
        BOOST_REQUIRE_EQUAL(got.size(), want.size());
        multi += got.size() > 1 ? 1 : 0;
        for (std::size_t i = 0; i < got.size(); ++i) {
            BOOST_CHECK_EQUAL(got[i].first, want[i]->bounds.first);
            BOOST_CHECK_EQUAL(got[i].last, want[i]->bounds.last);
            BOOST_CHECK(got[i].data == want[i]->data);
        }
    }
    BOOST_CHECK_GT(multi, 0u);
    for (const char* absent : {"", "a", "w", "w1x", "zzz", "w299z"})
        BOOST_CHECK(pack.term_blocks(absent).empty());
    std::size_t i = 0;  // each() walks them all in the writer's order
    pack.each([&](std::string_view term, const SegmentPack::Block& b) {
        BOOST_REQUIRE_LT(i, s.blocks.size());
        BOOST_CHECK(term == s.blocks[i].term);
        BOOST_CHECK(b.data == s.blocks[i].data);
        ++i;
    });
    BOOST_CHECK_EQUAL(i, s.blocks.size());
    // a copy outlives the original (offsets, not views into a moved string)
    SegmentPack copy = pack;
    pack = SegmentPack();
    BOOST_CHECK_EQUAL(copy.term_blocks(s.blocks.back().term).size(), by_term[s.blocks.back().term].size());
    // an empty segment packs to no terms
    SegmentPack none;
    BOOST_REQUIRE(SegmentPack::decode(encode_segment_pack({}), none));
    BOOST_CHECK_EQUAL(none.terms(), 0u);
}

BOOST_AUTO_TEST_CASE(a_malformed_pack_is_refused) {
    const Built s = build(random_batch(8, 40));
    const std::string bytes = encode_segment_pack(s.blocks);
    SegmentPack pack;
    std::vector<SegmentPack::Block> found;
    for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
        BOOST_CHECK(!SegmentPack::decode(bytes.substr(0, cut), pack));
        BOOST_CHECK(!SegmentPack::find(bytes.substr(0, cut), s.blocks.back().term, found));
    }
    BOOST_CHECK(!SegmentPack::decode(bytes + "x", pack));
    // terms out of order
    std::vector<SegmentBlock> swapped = s.blocks;
    std::swap(swapped.front(), swapped.back());
    BOOST_CHECK(!SegmentPack::decode(encode_segment_pack(swapped), pack));
    // any single flipped byte is refused or decodes to blocks whose headers match (no crash)
    for (std::size_t i = 0; i < bytes.size(); i += 3) {
        std::string bad = bytes;
        bad[i] = static_cast<char>(bad[i] ^ 0x21);
        if (SegmentPack::decode(bad, pack))
            pack.each([&](std::string_view, const SegmentPack::Block& b) {
                SegmentBlockBounds h;
                BOOST_CHECK(read_block_bounds(b.data, h) && h.first == b.first && h.last == b.last);
            });
    }
}

// Term groups (segment_pack.hpp): a segment's rows hold every block once, a frequent term's as
// they were, a rare term's in the first group whose key is at or after its own; a term found
// in no group is in none, and a look-up of an absent term finds no group holding it.
BOOST_AUTO_TEST_CASE(term_groups_hold_each_rare_term_where_its_look_up_finds_it) {
    const Built s = build(random_batch(9, 2000));
    std::map<std::string, std::vector<const SegmentBlock*>> by_term;
    for (const SegmentBlock& blk : s.blocks) by_term[blk.term].push_back(&blk);
    std::vector<SegmentBlock> copy = s.blocks;
    const std::vector<SegmentBlock> rows = group_terms(std::move(copy));
    std::map<std::string, std::string> groups;  // key -> data, in key order
    std::map<std::string, std::size_t> own;     // a frequent term's rows
    for (const SegmentBlock& r : rows) {
        if (is_group_key(r.term)) {
            BOOST_CHECK(groups.emplace(r.term, r.data).second);
            BOOST_CHECK_LE(r.data.size(), kGroupBytes);
        } else {
            ++own[r.term];
        }
    }
    BOOST_REQUIRE_GT(groups.size(), 1u);
    BOOST_REQUIRE_GT(own.size(), 0u);
    std::size_t grouped = 0;
    for (const auto& [term, want] : by_term) {
        const auto g = groups.lower_bound(group_key(term));
        std::vector<SegmentPack::Block> got;
        SegmentPack pack;
        if (g != groups.end()) {
            BOOST_REQUIRE(SegmentPack::decode(g->second, pack));
            got = pack.term_blocks(term);
            std::vector<SegmentPack::Block> found;  // the walk without decoding finds the same
            BOOST_REQUIRE(SegmentPack::find(g->second, term, found));
            BOOST_REQUIRE_EQUAL(found.size(), got.size());
            for (std::size_t i = 0; i < found.size(); ++i) BOOST_CHECK(found[i].data == got[i].data);
            const std::optional<std::string_view> first = SegmentPack::first_term(g->second);
            BOOST_REQUIRE(first);
            BOOST_CHECK(got.empty() || *first <= term);  // the cheap range check never skips a term
        }
        if (own.count(term)) {
            BOOST_CHECK_EQUAL(own[term], want.size());
            BOOST_CHECK(got.empty());
            std::size_t bytes = 0;
            for (const SegmentBlock* b : want) bytes += b->data.size();
            BOOST_CHECK_GE(bytes, kGroupTermBytes);
            continue;
        }
        ++grouped;
        BOOST_REQUIRE_EQUAL(got.size(), want.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            BOOST_CHECK_EQUAL(got[i].first, want[i]->bounds.first);
            BOOST_CHECK_EQUAL(got[i].last, want[i]->bounds.last);
            BOOST_CHECK(got[i].data == want[i]->data);
        }
    }
    BOOST_CHECK_EQUAL(grouped + own.size(), by_term.size());
    for (const char* absent : {"a", "w", "w1x", "w29", "zzz", "w299z"}) {
        const auto g = groups.lower_bound(group_key(absent));
        SegmentPack pack;
        if (g != groups.end() && SegmentPack::decode(g->second, pack)) BOOST_CHECK(pack.term_blocks(absent).empty());
    }
    // every block once: the groups' and the rows' together are the segment's
    std::size_t blocks = 0;
    for (const auto& [key, data] : groups) {
        SegmentPack pack;
        BOOST_REQUIRE(SegmentPack::decode(data, pack));
        pack.each([&](std::string_view, const SegmentPack::Block&) { ++blocks; });
    }
    for (const auto& [term, n] : own) blocks += n;
    BOOST_CHECK_EQUAL(blocks, s.blocks.size());
    BOOST_CHECK(!SegmentPack::first_term("K"));
}

BOOST_AUTO_TEST_SUITE_END()
