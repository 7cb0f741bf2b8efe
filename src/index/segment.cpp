#include "index/segment.hpp"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <limits>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "index/packed_block.hpp"

namespace notesd {

using detail::BlockReader;
using detail::put_fixed;
using detail::put_varint;
using detail::zigzag;

namespace {

constexpr char kNotesFormat = 'N';  ///< the first byte of a notes table
// A threaded merge cuts the terms into this many ranges per thread (the threads stay busy when
// ranges differ in size), of which at most kMergeRangesAhead wait merged for the sink.
constexpr unsigned kMergeRangesPerThread = 8;
constexpr std::size_t kMergeRangesAhead = 4;
using detail::kMaxSegmentCount;
using detail::kSegmentBlockFormat;
using detail::read_segment_count;

unsigned long long count_value(long long v) {
    if (v < 0 || static_cast<unsigned long long>(v) > kMaxSegmentCount)
        throw std::invalid_argument("segment count out of range");
    return static_cast<unsigned long long>(v);
}

// Writes the postings of one term (ascending ordinals) as blocks.
void emit_term(const std::string& term, const std::vector<SegmentPosting>& postings,
               const SegmentNotes& notes, const BlockSink& sink) {
    std::vector<SegmentPosting> block;
    for (std::size_t i = 0; i < postings.size(); i += kSegmentBlockPostings) {
        const std::size_t end = std::min(postings.size(), i + kSegmentBlockPostings);
        block.assign(postings.begin() + static_cast<std::ptrdiff_t>(i),
                     postings.begin() + static_cast<std::ptrdiff_t>(end));
        SegmentBlock b;
        b.term = term;
        b.data = encode_segment_block(block, notes, b.bounds);
        sink(std::move(b));
    }
}

}  // namespace

// ---- notes table ----

std::string encode_segment_notes(const SegmentNotes& notes) {
    std::string out(1, kNotesFormat);
    out.reserve(8 + notes.size() * 28);
    put_varint(out, notes.size());
    for (std::size_t i = 0; i < notes.size(); ++i) {
        const SegmentNote& n = notes[i];
        if (i > 0 && !notes[i - 1].before(n))
            throw std::invalid_argument("segment notes must be in candidate order, each once");
        if (i == 0)
            put_fixed(out, n.updated_us);
        else  // newest first: the gap is never negative
            put_varint(out, static_cast<unsigned long long>(notes[i - 1].updated_us) -
                                static_cast<unsigned long long>(n.updated_us));
        put_fixed(out, n.uid_hi);
        put_fixed(out, n.uid_lo);
        // most notes are created at or shortly before their update
        put_varint(out, zigzag(static_cast<long long>(static_cast<unsigned long long>(n.updated_us) -
                                                      static_cast<unsigned long long>(n.created_us))));
        put_varint(out, zigzag(n.flags));
        put_varint(out, count_value(n.title_len));
        put_varint(out, count_value(n.body_len));
    }
    return out;
}

bool decode_segment_notes(std::string_view data, SegmentNotes& out) {
    out.clear();
    if (data.empty() || data[0] != kNotesFormat) return false;
    BlockReader r(data.substr(1));
    unsigned long long n = 0;
    if (!r.varint(n) || n > data.size()) return false;  // a note takes more than a byte
    out.resize(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < out.size(); ++i) {
        SegmentNote& s = out[i];
        if (i == 0) {
            if (!r.fixed(s.updated_us)) return false;
        } else {
            unsigned long long gap = 0;
            if (!r.varint(gap)) return false;
            s.updated_us = static_cast<long long>(static_cast<unsigned long long>(out[i - 1].updated_us) - gap);
        }
        unsigned long long created_gap = 0;
        if (!r.fixed(s.uid_hi) || !r.fixed(s.uid_lo) || !r.varint(created_gap) ||
            !r.signed_varint(s.flags) || !read_segment_count(r, s.title_len) || !read_segment_count(r, s.body_len))
            return false;
        s.created_us = static_cast<long long>(static_cast<unsigned long long>(s.updated_us) -
                                              static_cast<unsigned long long>(detail::unzigzag(created_gap)));
        if (i > 0 && !out[i - 1].before(s)) return false;
    }
    return r.done();
}

long long find_ordinal(const SegmentNotes& notes, long long updated_us, long long uid_hi,
                       long long uid_lo) {
    SegmentNote key;
    key.updated_us = updated_us;
    key.uid_hi = uid_hi;
    key.uid_lo = uid_lo;
    auto it = std::lower_bound(notes.begin(), notes.end(), key,
                               [](const SegmentNote& a, const SegmentNote& b) { return a.before(b); });
    if (it == notes.end() || it->updated_us != updated_us || it->uid_hi != uid_hi || it->uid_lo != uid_lo)
        return -1;
    return it - notes.begin();
}

// ---- blocks ----

std::string encode_segment_block(const std::vector<SegmentPosting>& postings,
                                 const SegmentNotes& notes, SegmentBlockBounds& b) {
    if (postings.empty()) throw std::invalid_argument("a segment block holds at least one posting");
    b = SegmentBlockBounds{};
    b.n = static_cast<long long>(postings.size());
    b.first = postings.front().ordinal;
    b.last = postings.back().ordinal;
    b.min_title_len = b.min_body_len = std::numeric_limits<long long>::max();
    for (std::size_t i = 0; i < postings.size(); ++i) {
        const SegmentPosting& p = postings[i];
        if (p.ordinal < 0 || p.ordinal >= static_cast<long long>(notes.size()) ||
            (i > 0 && p.ordinal <= postings[i - 1].ordinal))
            throw std::invalid_argument("segment block ordinals must ascend within the notes");
        const SegmentNote& n = notes[static_cast<std::size_t>(p.ordinal)];
        b.max_title_tf = std::max(b.max_title_tf, p.title_tf);
        b.max_body_tf = std::max(b.max_body_tf, p.body_tf);
        b.min_title_len = std::min(b.min_title_len, n.title_len);
        b.min_body_len = std::min(b.min_body_len, n.body_len);
    }
    std::string out(1, kSegmentBlockFormat);
    out.reserve(16 + postings.size() * 8);
    put_varint(out, static_cast<unsigned long long>(b.n));
    put_varint(out, static_cast<unsigned long long>(b.first));
    put_varint(out, static_cast<unsigned long long>(b.last - b.first));
    for (long long v : {b.max_title_tf, b.max_body_tf, b.min_title_len, b.min_body_len})
        put_varint(out, count_value(v));
    long long prev = b.first;
    for (const SegmentPosting& p : postings) {
        put_varint(out, static_cast<unsigned long long>(p.ordinal - prev));
        prev = p.ordinal;
        put_varint(out, count_value(p.title_tf));
        put_varint(out, count_value(p.body_tf));
        put_varint(out, p.pos.size());
        out.append(p.pos.data(), p.pos.size());
    }
    return out;
}

namespace detail {

bool read_segment_header(BlockReader& r, SegmentBlockBounds& b) {
    unsigned long long n = 0, first = 0, span = 0;
    if (!r.varint(n) || !r.varint(first) || !r.varint(span) || n == 0 || n > kSegmentBlockPostings ||
        first > kMaxSegmentCount || span > kMaxSegmentCount)
        return false;
    b.n = static_cast<long long>(n);
    b.first = static_cast<long long>(first);
    b.last = b.first + static_cast<long long>(span);
    return read_segment_count(r, b.max_title_tf) && read_segment_count(r, b.max_body_tf) &&
           read_segment_count(r, b.min_title_len) && read_segment_count(r, b.min_body_len);
}

}  // namespace detail

bool read_block_bounds(std::string_view data, SegmentBlockBounds& bounds) {
    if (data.empty() || data[0] != kSegmentBlockFormat) return false;
    BlockReader r(data.substr(1));
    return detail::read_segment_header(r, bounds);
}

bool decode_segment_block(std::string_view data, const SegmentNotes& notes,
                          const LiveDocs& live, bool with_positions, std::vector<TermPosting>& out) {
    const std::size_t before = out.size();
    const bool ok = each_segment_posting(data, static_cast<long long>(notes.size()), [&](const SegmentPosting& p) {
        if (!live.live(p.ordinal)) return true;
        out.push_back(segment_posting(notes[static_cast<std::size_t>(p.ordinal)], p, with_positions));
        return true;
    });
    if (!ok) out.resize(before);
    return ok;
}

// ---- live notes ----

bool LiveDocs::decode(std::string_view data, long long notes, LiveDocs& out) {
    if (notes < 0 || data.size() != static_cast<std::size_t>((notes + 7) / 8)) return false;
    // bits past the last note must be clear, so one live set has one encoding
    if (notes % 8 != 0 && (static_cast<unsigned char>(data.back()) >> (notes % 8)) != 0) return false;
    out = LiveDocs(notes);
    out.dead_.assign(data.begin(), data.end());
    for (unsigned char b : data) out.dead_count_ += __builtin_popcount(b);
    return true;
}

bool LiveDocs::remove(long long ordinal) {
    if (!live(ordinal)) return false;
    dead_[static_cast<std::size_t>(ordinal >> 3)] =
        static_cast<char>(dead_[static_cast<std::size_t>(ordinal >> 3)] | (1 << (ordinal & 7)));
    ++dead_count_;
    return true;
}

// ---- building ----

std::uint32_t SegmentBuilder::term_id(const std::string& term) {
    auto index_of = [](std::uint64_t slot) { return static_cast<std::uint32_t>((slot & 0xffffffffu) - 1); };
    auto tag_of = [](std::uint64_t hash_or_slot) { return hash_or_slot >> 32 << 32; };
    // Kept at most half full, so a probe always ends at the term or at an empty slot.
    if (2 * (terms_.size() + 1) > term_slots_.size()) {
        std::vector<std::uint64_t> slots(std::max<std::size_t>(1024, 2 * term_slots_.size()), 0);
        const std::size_t mask = slots.size() - 1;
        for (const std::uint64_t s : term_slots_) {
            if (s == 0) continue;
            std::size_t i = std::hash<std::string>{}(terms_[index_of(s)]) & mask;
            while (slots[i] != 0) i = (i + 1) & mask;
            slots[i] = s;
        }
        term_slots_ = std::move(slots);
    }
    const std::size_t h = std::hash<std::string>{}(term);
    const std::uint64_t tag = tag_of(h);
    const std::size_t mask = term_slots_.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
        const std::uint64_t s = term_slots_[i];
        if (s == 0) {
            if (terms_.size() >= std::numeric_limits<std::uint32_t>::max())
                throw std::length_error("a segment builder holds at most 2^32 - 1 terms");
            terms_.push_back(term);
            term_slots_[i] = tag | terms_.size();
            return static_cast<std::uint32_t>(terms_.size() - 1);
        }
        if (tag_of(s) == tag && terms_[index_of(s)] == term) return index_of(s);
    }
}

void SegmentBuilder::add(const SegmentNote& note, const std::vector<SegmentTerm>& terms) {
    auto [it, fresh] = by_uuid_.try_emplace({note.uid_hi, note.uid_lo}, notes_.size());
    if (!fresh) {  // the batch's last version of a note wins
        dropped_[it->second] = true;
        ++replaced_;
        it->second = notes_.size();
    }
    notes_.push_back(note);
    dropped_.push_back(false);
    // Entries hold 32-bit counts and indexes: count_value bounds them to 2^31 - 1.
    const auto note_index = static_cast<std::uint32_t>(count_value(static_cast<long long>(notes_.size() - 1)));
    for (const SegmentTerm& t : terms) {
        if (t.pos.size() > std::numeric_limits<std::uint32_t>::max() - pos_.size())
            throw std::length_error("a segment builder holds at most 4 GiB of positions");
        entries_.push_back(Entry{term_id(t.term), note_index, static_cast<std::uint32_t>(count_value(t.title_tf)),
                                 static_cast<std::uint32_t>(count_value(t.body_tf)),
                                 static_cast<std::uint32_t>(pos_.size()), static_cast<std::uint32_t>(t.pos.size())});
        pos_ += t.pos;
    }
}

void SegmentBuilder::reserve(std::size_t notes, std::size_t postings, std::size_t position_bytes) {
    notes_.reserve(notes);
    dropped_.reserve(notes);
    entries_.reserve(postings);
    pos_.reserve(position_bytes);
}

std::vector<std::pair<std::string, int>> SegmentBuilder::term_notes() const {
    std::vector<int> notes(terms_.size());
    for (const Entry& e : entries_)
        if (!dropped_[e.note]) ++notes[e.term];
    std::vector<std::pair<std::string, int>> out;
    out.reserve(terms_.size());
    for (std::size_t i = 0; i < terms_.size(); ++i)
        if (notes[i] > 0) out.emplace_back(terms_[i], notes[i]);
    return out;
}

std::string SegmentBuilder::finish(const BlockSink& sink) {
    std::vector<std::size_t> order;  // live notes_ indexes in candidate order
    for (std::size_t i = 0; i < notes_.size(); ++i)
        if (!dropped_[i]) order.push_back(i);
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return notes_[a].before(notes_[b]); });
    std::vector<long long> ordinal(notes_.size(), -1);
    SegmentNotes sorted;
    sorted.reserve(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
        ordinal[order[i]] = static_cast<long long>(i);
        sorted.push_back(notes_[order[i]]);
    }
    // The terms ranked bytewise once; then a counting sort: a run of slots per term in rank
    // order, filled note by note in candidate order, so each term's postings come out in
    // ascending ordinals without a comparison sort of the batch's postings.
    std::vector<std::uint32_t> by_rank(terms_.size());
    std::iota(by_rank.begin(), by_rank.end(), 0u);
    std::sort(by_rank.begin(), by_rank.end(),
              [&](std::uint32_t a, std::uint32_t b) { return terms_[a] < terms_[b]; });
    std::vector<std::uint32_t> rank(terms_.size());
    for (std::uint32_t r = 0; r < by_rank.size(); ++r) rank[by_rank[r]] = r;
    std::vector<std::size_t> first_entry(notes_.size() + 1, 0);  // a note's entries are adjacent
    std::vector<std::size_t> run(terms_.size() + 1, 0);           // by rank: where its slots start
    for (const Entry& e : entries_) {
        ++first_entry[e.note + 1];
        if (!dropped_[e.note]) ++run[rank[e.term] + 1];
    }
    std::partial_sum(first_entry.begin(), first_entry.end(), first_entry.begin());
    std::partial_sum(run.begin(), run.end(), run.begin());
    std::vector<std::size_t> slots(run.back());  // entries_ indexes
    std::vector<std::size_t> next(run.begin(), run.end() - 1);
    for (const std::size_t note : order)
        for (std::size_t i = first_entry[note]; i < first_entry[note + 1]; ++i)
            slots[next[rank[entries_[i].term]]++] = i;
    std::vector<SegmentPosting> postings;
    for (std::size_t r = 0; r < by_rank.size(); ++r) {
        postings.clear();
        for (std::size_t k = run[r]; k < run[r + 1]; ++k) {
            const Entry& e = entries_[slots[k]];
            if (!postings.empty() && postings.back().ordinal == ordinal[e.note])
                throw std::invalid_argument("a segment note lists a term twice");
            postings.push_back(SegmentPosting{ordinal[e.note], e.title_tf, e.body_tf,
                                              std::string_view(pos_).substr(e.pos_at, e.pos_size)});
        }
        if (!postings.empty()) emit_term(terms_[by_rank[r]], postings, sorted, sink);
    }
    std::string out = encode_segment_notes(sorted);
    *this = SegmentBuilder();
    return out;
}

// ---- merging ----

namespace {

// Appends one input block's live postings with their ordinals in the merged segment.
void merge_block(const SegmentInput& in, const std::string& data, const std::vector<long long>& to,
                 std::vector<SegmentPosting>& out) {
    const bool ok = each_segment_posting(data, static_cast<long long>(in.notes.size()), [&](const SegmentPosting& p) {
        if (in.live.live(p.ordinal)) out.push_back(SegmentPosting{to[static_cast<std::size_t>(p.ordinal)], p.title_tf, p.body_tf, p.pos});
        return true;
    });
    if (!ok) throw std::runtime_error("malformed segment block in a merge");
}

// Puts postings in ascending ordinals when they are runs that each ascend already (one per
// input: the merged order is the inputs' own order, so an input's ordinals map in order),
// `ends` the end of each run: the runs merged pairwise, log2(runs) linear passes instead of a
// comparison sort of the whole term (which was an eighth of an import's compaction).
void merge_runs(std::vector<SegmentPosting>& postings, std::vector<std::size_t>& ends) {
    auto by_ordinal = [](const SegmentPosting& a, const SegmentPosting& b) { return a.ordinal < b.ordinal; };
    for (std::size_t r = 0, begin = 0; r < ends.size(); begin = ends[r++]) {
        if (!std::is_sorted(postings.begin() + static_cast<std::ptrdiff_t>(begin),
                            postings.begin() + static_cast<std::ptrdiff_t>(ends[r]), by_ordinal)) {
            std::sort(postings.begin(), postings.end(), by_ordinal);  // not as written: still exact
            return;
        }
    }
    while (ends.size() > 1) {
        std::size_t kept = 0, begin = 0;
        for (std::size_t r = 0; r < ends.size(); r += 2) {
            const std::size_t end = ends[std::min(r + 1, ends.size() - 1)];  // a last odd run stays
            if (r + 1 < ends.size())
                std::inplace_merge(postings.begin() + static_cast<std::ptrdiff_t>(begin),
                                   postings.begin() + static_cast<std::ptrdiff_t>(ends[r]),
                                   postings.begin() + static_cast<std::ptrdiff_t>(end), by_ordinal);
            ends[kept++] = begin = end;
        }
        ends.resize(kept);
    }
}

// Where each input's blocks of a term range begin: one index per input.
using Cut = std::vector<std::size_t>;

// Merges every input's terms from the cut `at` up to the cut `end`, re-blocked, into `sink` in
// term order.
void merge_term_range(const std::vector<SegmentInput>& inputs, const std::vector<std::vector<long long>>& to,
                      const SegmentNotes& merged, Cut at, const Cut& end, const BlockSink& sink) {
    std::vector<SegmentPosting> postings;
    std::vector<std::size_t> ends;  // of each input's run in postings
    for (;;) {
        const std::string* term = nullptr;
        for (std::size_t s = 0; s < inputs.size(); ++s)
            if (at[s] < end[s] && (!term || inputs[s].blocks[at[s]].first < *term))
                term = &inputs[s].blocks[at[s]].first;
        if (!term) break;
        const std::string t = *term;
        postings.clear();
        ends.clear();
        for (std::size_t s = 0; s < inputs.size(); ++s) {
            for (; at[s] < end[s] && inputs[s].blocks[at[s]].first == t; ++at[s])
                merge_block(inputs[s], inputs[s].blocks[at[s]].second, to[s], postings);
            if (postings.size() > (ends.empty() ? 0 : ends.back())) ends.push_back(postings.size());
        }
        merge_runs(postings, ends);
        if (!postings.empty()) emit_term(t, postings, merged, sink);
    }
}

// The term ranges a merge is cut into: at terms spaced evenly through the input with the most
// blocks, each cut where every input's blocks of that term begin (a term is never split).
std::vector<Cut> term_range_cuts(const std::vector<SegmentInput>& inputs, std::size_t parts) {
    Cut first(inputs.size(), 0), last(inputs.size());
    for (std::size_t s = 0; s < inputs.size(); ++s) last[s] = inputs[s].blocks.size();
    std::vector<Cut> cuts{first};
    std::size_t most = 0;
    for (std::size_t s = 1; s < inputs.size(); ++s)
        if (inputs[s].blocks.size() > inputs[most].blocks.size()) most = s;
    const std::size_t blocks = inputs.empty() ? 0 : inputs[most].blocks.size();
    for (std::size_t k = 1; k < parts && blocks > 1; ++k) {
        const std::string& pivot = inputs[most].blocks[blocks * k / parts].first;
        Cut c(inputs.size());
        for (std::size_t s = 0; s < inputs.size(); ++s)
            c[s] = static_cast<std::size_t>(
                std::lower_bound(inputs[s].blocks.begin(), inputs[s].blocks.end(), pivot,
                                 [](const auto& b, const std::string& t) { return b.first < t; }) -
                inputs[s].blocks.begin());
        if (c != cuts.back()) cuts.push_back(std::move(c));
    }
    cuts.push_back(last);
    return cuts;
}

// The merged notes table, every input's live notes in candidate order, and where each input's
// ordinals went in it (-1: dead).
SegmentNotes merge_notes(const std::vector<SegmentInput>& inputs, std::vector<std::vector<long long>>& to) {
    std::vector<std::pair<std::size_t, std::size_t>> all;  // (input, ordinal)
    for (std::size_t s = 0; s < inputs.size(); ++s)
        for (std::size_t i = 0; i < inputs[s].notes.size(); ++i)
            if (inputs[s].live.live(static_cast<long long>(i))) all.emplace_back(s, i);
    auto note = [&](const std::pair<std::size_t, std::size_t>& x) -> const SegmentNote& {
        return inputs[x.first].notes[x.second];
    };
    std::sort(all.begin(), all.end(), [&](const auto& a, const auto& b) { return note(a).before(note(b)); });
    SegmentNotes merged;
    merged.reserve(all.size());
    to.assign(inputs.size(), {});
    for (std::size_t s = 0; s < inputs.size(); ++s) to[s].assign(inputs[s].notes.size(), -1);
    for (const auto& x : all) {
        if (!merged.empty() && !merged.back().before(note(x)))
            throw std::runtime_error("a note is live in two merged segments");
        to[x.first][x.second] = static_cast<long long>(merged.size());
        merged.push_back(note(x));
    }
    return merged;
}

// The term ranges between the cuts merged by `threads` threads, at most kMergeRangesAhead
// ahead of this one, which hands each finished range's blocks to the sink in order (a sink
// need not be thread-safe). The first error, a range's or the sink's, ends it.
void merge_ranges_on_threads(const std::vector<SegmentInput>& inputs, const std::vector<std::vector<long long>>& to,
                             const SegmentNotes& merged, const std::vector<Cut>& cuts, unsigned threads,
                             const BlockSink& sink) {
    struct Range {
        std::vector<SegmentBlock> blocks;
        std::exception_ptr failed;
        bool done = false;
    };
    const std::size_t ranges = cuts.size() - 1;
    std::vector<Range> out(ranges);
    std::mutex m;
    std::condition_variable changed;
    std::size_t next = 0, sunk = 0;  // the next range to merge; ranges handed to the sink
    bool stop = false;
    auto work = [&] {
        std::unique_lock<std::mutex> lock(m);
        for (;;) {
            changed.wait(lock, [&] { return stop || next >= ranges || next < sunk + kMergeRangesAhead; });
            if (stop || next >= ranges) return;
            const std::size_t r = next++;
            lock.unlock();
            Range done;
            try {
                merge_term_range(inputs, to, merged, cuts[r], cuts[r + 1],
                                 [&](SegmentBlock&& b) { done.blocks.push_back(std::move(b)); });
            } catch (...) {
                done.failed = std::current_exception();
            }
            done.done = true;
            lock.lock();
            out[r] = std::move(done);
            changed.notify_all();
        }
    };
    std::vector<std::thread> pool;
    auto join = [&] {
        {
            std::lock_guard<std::mutex> lock(m);
            stop = true;
        }
        changed.notify_all();
        for (std::thread& t : pool) t.join();
    };
    try {
        for (unsigned k = 0; k < threads; ++k) pool.emplace_back(work);
        for (std::size_t r = 0; r < ranges; ++r) {
            std::vector<SegmentBlock> blocks;
            {
                std::unique_lock<std::mutex> lock(m);
                changed.wait(lock, [&] { return out[r].done; });
                if (out[r].failed) std::rethrow_exception(out[r].failed);
                blocks = std::move(out[r].blocks);
                ++sunk;
            }
            changed.notify_all();
            for (SegmentBlock& b : blocks) sink(std::move(b));
        }
    } catch (...) {
        join();
        throw;
    }
    join();
}

}  // namespace

std::string merge_segments(const std::vector<SegmentInput>& inputs, const BlockSink& sink, unsigned threads) {
    std::vector<std::vector<long long>> to;
    const SegmentNotes merged = merge_notes(inputs, to);
    // Terms in order across the inputs: each term's blocks from every input, re-blocked; with
    // threads, in ranges merged ahead on their own threads.
    const std::vector<Cut> cuts = term_range_cuts(inputs, threads > 1 ? kMergeRangesPerThread * threads : 1);
    if (threads <= 1 || cuts.size() <= 2)
        merge_term_range(inputs, to, merged, cuts.front(), cuts.back(), sink);
    else
        merge_ranges_on_threads(inputs, to, merged, cuts, threads, sink);
    return encode_segment_notes(merged);
}

}  // namespace notesd
