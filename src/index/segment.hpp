// Index segments (issue 19, design section 5.1): the postings of a batch of notes built in
// memory, sorted, and written once per term as compressed blocks, instead of a B-tree insert
// per posting. Pure format: storage (a blob per block in a table, the same on every backend)
// lives in src/store/.
//
// A segment holds
//  - its notes (the "doc table"): each note's candidate key (updated_us, uuid halves), the
//    filter columns (created_us, flags) and BM25F's field lengths, once per note, in candidate
//    order (updated_us desc, uid_hi desc, uid_lo desc); a note's index there is its ordinal;
//  - per term, blocks of up to kSegmentBlockPostings postings in ordinal order: delta-coded
//    ordinals, the title and body counts, the positions (positions.hpp's text), and per-block
//    bounds (ordinal range, largest counts, shortest fields) so a reader can skip a block by
//    time window (the ordinals' notes) or by its best possible score;
//  - its live notes (LiveDocs): a deleted or rewritten note is marked dead at once, so reads
//    stay exact until a merge drops it.
// Reading a term's blocks in order gives its postings in candidate order, as the postings rows'
// primary key does; several segments merge by the same key.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/huge_pages.hpp"
#include "base/model.hpp"
#include "index/packed_block.hpp"

namespace notesd {

constexpr std::size_t kSegmentBlockPostings = 128;  ///< postings per block at most

/// One note of a segment.
struct SegmentNote {
    long long updated_us = 0, uid_hi = 0, uid_lo = 0;  ///< the candidate key
    long long created_us = 0, flags = 0;
    long long title_len = 0, body_len = 0;
    /// Candidate order: newest first, ties by uuid descending (the postings rows' order).
    bool before(const SegmentNote& o) const {
        if (updated_us != o.updated_us) return updated_us > o.updated_us;
        return uid_hi != o.uid_hi ? uid_hi > o.uid_hi : uid_lo > o.uid_lo;
    }
};

/// A segment's notes table in ordinal order. Kept by every worker for every segment it has
/// searched, so in huge pages (base/huge_pages.hpp) once it reaches 2 MB.
using SegmentNotes = std::vector<SegmentNote, HugePageAllocator<SegmentNote>>;

/// What a block says about itself without decoding its postings.
struct SegmentBlockBounds {
    long long n = 0;                    ///< postings
    long long first = 0, last = 0;      ///< ordinals of the first and last posting
    long long max_title_tf = 0, max_body_tf = 0;
    long long min_title_len = 0, min_body_len = 0;
};

/// One block of one term.
struct SegmentBlock {
    std::string term;
    SegmentBlockBounds bounds;
    std::string data;  ///< encode format; its header repeats the bounds
};

/// One distinct term of a note with its counts and positions (positions.hpp's text).
struct SegmentTerm {
    std::string term;
    long long title_tf = 0, body_tf = 0;
    std::string pos;
};

/// Receives a segment's blocks in term order (bytewise), each term's in ordinal order.
using BlockSink = std::function<void(SegmentBlock&&)>;

/// Builds one segment from notes and their terms, in any order. A note added twice (same uuid)
/// keeps its last version. Memory: the batch's postings.
class SegmentBuilder {
public:
    /// Adds (or replaces) a note; terms are its distinct terms with their counts and positions.
    void add(const SegmentNote& note, const std::vector<SegmentTerm>& terms);
    /// Room for this many notes, postings and bytes of positions, when they are known ahead (a
    /// batch): the arrays are allocated once instead of doubling, each doubling a copy and, the
    /// first time, fresh pages.
    void reserve(std::size_t notes, std::size_t postings, std::size_t position_bytes);
    /// Each term with the number of notes (replaced versions not counted) that hold it, in no
    /// particular order: the term_df increases of a batch of new notes.
    std::vector<std::pair<std::string, int>> term_notes() const;
    std::size_t notes() const { return notes_.size() - replaced_; }
    /// Postings held (replaced versions included), for bounding a batch's memory.
    std::size_t postings() const { return entries_.size(); }
    /// Distinct terms held (replaced versions' included): finish writes a block or more for most.
    std::size_t terms() const { return terms_.size(); }
    bool empty() const { return notes() == 0; }
    /// The notes table (encode_segment_notes of the live notes in candidate order); the blocks
    /// go to `sink`. The builder is empty afterwards.
    std::string finish(const BlockSink& sink);

private:
    // 24 bytes, the positions in pos_ rather than a string each: an import batch holds a few
    // hundred thousand, and an allocation per posting cost as much as the rest of add().
    struct Entry {
        std::uint32_t term = 0;  // index into terms_
        std::uint32_t note = 0;  // index into notes_
        std::uint32_t title_tf = 0, body_tf = 0;
        std::uint32_t pos_at = 0, pos_size = 0;  // in pos_
    };
    SegmentNotes notes_;
    std::vector<bool> dropped_;  // notes_ entries replaced by a later version
    std::vector<Entry> entries_;
    std::string pos_;  // every entry's positions, one after the other
    // Each distinct term once: a batch's postings are sorted by the terms' ranks, not strings.
    std::vector<std::string> terms_;
    // terms_ by hash, open addressing: each slot (hash's high half << 32 | index + 1), 0 empty.
    // A node-based map cost an allocation and a cache miss per look-up, once per posting.
    std::vector<std::uint64_t> term_slots_;
    std::uint32_t term_id(const std::string& term);
    std::map<std::pair<long long, long long>, std::size_t> by_uuid_;  // uuid halves -> notes_
    std::size_t replaced_ = 0;
};

/// The notes table: a format byte, the count, then per note (in candidate order) the time as a
/// gap from the previous one, both uuid halves raw, created and flags, the two lengths.
std::string encode_segment_notes(const SegmentNotes& notes);
/// False when malformed or not in candidate order (out is then unspecified).
bool decode_segment_notes(std::string_view data, SegmentNotes& out);

/// Encodes one block; postings are (ordinal, title_tf, body_tf, pos) in ascending ordinals.
struct SegmentPosting {
    long long ordinal = 0, title_tf = 0, body_tf = 0;
    std::string_view pos;
};
std::string encode_segment_block(const std::vector<SegmentPosting>& postings,
                                 const SegmentNotes& notes, SegmentBlockBounds& bounds);
/// The bounds in a block's header; false when malformed.
bool read_block_bounds(std::string_view data, SegmentBlockBounds& bounds);
namespace detail {
constexpr char kSegmentBlockFormat = 'P';  ///< the first byte of a segment block
/// Larger counts and lengths are malformed (a field holds at most 2^31 - 1 terms).
constexpr unsigned long long kMaxSegmentCount = 0x7fffffffULL;
inline bool read_segment_count(BlockReader& r, long long& v) {
    unsigned long long u = 0;
    if (!r.varint(u) || u > kMaxSegmentCount) return false;
    v = static_cast<long long>(u);
    return true;
}
/// A block's header after its format byte.
bool read_segment_header(BlockReader& r, SegmentBlockBounds& b);
}  // namespace detail

/// Calls fn(posting) for each posting of the block in order (pos a view into data); fn returns
/// false to stop. False when the data is malformed or names an ordinal beyond `notes`. (A
/// template: it runs once per posting a search reads.)
template <class Fn>
bool each_segment_posting(std::string_view data, long long notes, Fn&& fn) {
    if (data.empty() || data[0] != detail::kSegmentBlockFormat) return false;
    detail::BlockReader r(data.substr(1));
    SegmentBlockBounds b;
    if (!detail::read_segment_header(r, b) || b.last >= notes) return false;
    SegmentPosting p;
    p.ordinal = b.first;
    for (long long i = 0; i < b.n; ++i) {
        unsigned long long gap = 0, len = 0;
        if (!r.varint(gap) || gap > detail::kMaxSegmentCount || (i > 0 && gap == 0) ||
            (i == 0 && gap != 0) || !detail::read_segment_count(r, p.title_tf) ||
            !detail::read_segment_count(r, p.body_tf) || !r.varint(len) ||
            !r.bytes(static_cast<std::size_t>(len), p.pos))
            return false;
        p.ordinal += static_cast<long long>(gap);
        if (p.ordinal > b.last || (i == b.n - 1 && p.ordinal != b.last)) return false;
        if (!fn(static_cast<const SegmentPosting&>(p))) return true;
    }
    return r.done();
}
/// Whether the note passes the filter's time bounds and flags (collections are the caller's).
inline bool passes_filter(const SegmentNote& n, const SearchFilter& f) {
    return n.updated_us >= f.updated.min_us && n.updated_us <= f.updated.max_us &&
           n.created_us >= f.created.min_us && n.created_us <= f.created.max_us &&
           (f.flags_any == 0 || (n.flags & f.flags_any) != 0);
}

/// A posting of a segment note as search reads it (positions only when asked).
inline TermPosting segment_posting(const SegmentNote& n, const SegmentPosting& p, bool with_positions) {
    return TermPosting{n.uid_hi, n.uid_lo, n.updated_us, static_cast<int>(p.title_tf),
                       static_cast<int>(p.body_tf), static_cast<int>(n.title_len),
                       static_cast<int>(n.body_len),
                       with_positions ? std::string(p.pos) : std::string()};
}

/// Appends the block's postings of live notes as TermPostings (positions only when asked), in
/// candidate order; false when malformed (out is then left as it was).
class LiveDocs;
bool decode_segment_block(std::string_view data, const SegmentNotes& notes,
                          const LiveDocs& live, bool with_positions, std::vector<TermPosting>& out);

/// Which notes of a segment are live. Encoded as a bitmap of the dead ones (bit i: ordinal i).
class LiveDocs {
public:
    explicit LiveDocs(long long notes = 0) : notes_(notes), dead_(static_cast<std::size_t>((notes + 7) / 8)) {}
    /// False when data does not fit a segment of `notes` notes.
    static bool decode(std::string_view data, long long notes, LiveDocs& out);
    std::string encode() const { return std::string(dead_.begin(), dead_.end()); }
    bool live(long long ordinal) const {
        return ordinal >= 0 && ordinal < notes_ &&
               !(static_cast<unsigned char>(dead_[static_cast<std::size_t>(ordinal >> 3)]) >> (ordinal & 7) & 1);
    }
    /// Marks a note dead; false when it already was (or is out of range).
    bool remove(long long ordinal);
    long long notes() const { return notes_; }
    long long live_count() const { return notes_ - dead_count_; }

private:
    long long notes_ = 0, dead_count_ = 0;
    std::vector<char> dead_;
};

/// The ordinal of the note with this key in the notes table (candidate order), or -1.
long long find_ordinal(const SegmentNotes& notes, long long updated_us, long long uid_hi,
                       long long uid_lo);

/// One input of a merge: a segment's notes, its live set and its blocks in term order.
struct SegmentInput {
    SegmentNotes notes;
    LiveDocs live;
    std::vector<std::pair<std::string, std::string>> blocks;  ///< (term, data), term-ordered
};

/// Merges segments into one holding exactly their live notes and postings: the notes table
/// is returned, the blocks go to `sink` term by term, from the calling thread (memory: the
/// notes and one term's postings). With `threads` > 1, that many threads merge term ranges
/// ahead of the sink (memory: a few ranges' blocks more); the blocks are the same. Throws
/// std::runtime_error on a malformed input block.
std::string merge_segments(const std::vector<SegmentInput>& inputs, const BlockSink& sink, unsigned threads = 1);

}  // namespace notesd
