// A small segment's blocks as one value (issue 19): the blocks of every term of a segment, in
// term order, behind a directory of terms. Pure format; storage is src/store/'s (one row of
// segment_blocks under the empty term, which no real term is).
//
// Why: a background fold of about 100 notes holds 6,600-7,700 blocks, one per distinct term and
// a few postings each, and every one was a row inserted by the fold and deleted by the first
// merge; the next merges of small segments wrote and deleted about 20 and 9 rows a note again.
// Those rows were most of the merger's work under API writes (doc/benchmarks.md). A segment
// whose blocks fit kSegmentPackBytes is written as one pack instead; readers keep a segment's
// pack once per process, as its notes table (segments never change), and look terms up in it.
//
// Layout: the format byte, the number of terms; per term its length and bytes, its number of
// blocks, per block its first ordinal, last - first and data length; then every block's data in
// that order. Blocks are those of segment.hpp, unchanged.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "index/segment.hpp"

namespace notesd {

/// Segments whose blocks take at most this many bytes are written as one pack.
constexpr std::size_t kSegmentPackBytes = std::size_t{1} << 20;

/// Encodes blocks given in term order (bytewise), each term's in ordinal order, as one pack.
std::string encode_segment_pack(const std::vector<SegmentBlock>& blocks);

// Term groups. A larger segment keeps a row per block for its frequent terms, but its rare
// terms, most of its terms, go in groups: a run of consecutive rare terms (in term order) with
// their blocks, as a pack (the format above), one row under the group's key, the mark followed
// by the group's last term. A term's group is then the segment's first group whose key is at
// or after group_key(term), if the term has no rows of its own. Why: an import batch of 5,000
// notes held about 35,000 blocks averaging 210 bytes, each a row inserted by the batch and
// read and deleted again by the compaction (doc/benchmarks.md, "Term groups").

/// A term whose blocks take fewer bytes than this goes in a group.
constexpr std::size_t kGroupTermBytes = 1024;
/// At most this many bytes of terms and blocks in a group: four rows fill one of SQLite's 16 KiB
/// pages (notesd's page size); larger groups left most of a page empty (a row of 8-9 KB takes
/// a page alone).
constexpr std::size_t kGroupBytes = 3900;
/// Group keys start with this byte, which no analysed term does; '' is a whole-segment pack.
constexpr char kGroupKeyMark = '\x01';

/// The key of a group whose last term is `last_term`; for a look-up, the key a term's group
/// is at or after.
std::string group_key(std::string_view last_term);
/// The least key after every group key: group keys are in [group_key(""), group_keys_end()).
std::string group_keys_end();
bool is_group_key(std::string_view term);

/// Turns a segment's blocks, given in term order, into its rows: the blocks of frequent terms
/// as they are, the rare terms' in groups. Rows come out as they are complete: a frequent
/// term's blocks at once, a group once the next rare term would not fit, or at finish().
class TermGrouper {
public:
    explicit TermGrouper(BlockSink sink) : sink_(std::move(sink)) {}
    void add(SegmentBlock&& block);
    /// Sends what is held (call once, after the last add).
    void finish();

private:
    void end_term();
    void end_group();
    BlockSink sink_;
    std::vector<SegmentBlock> term_, group_;  // the current term's blocks; the open group's
    std::size_t term_bytes_ = 0, group_bytes_ = 0;
};

/// A segment's blocks as its rows (TermGrouper), in one vector.
std::vector<SegmentBlock> group_terms(std::vector<SegmentBlock>&& blocks);

/// A decoded pack: owns its bytes; term look-ups by binary search in its directory.
class SegmentPack {
public:
    struct Block {
        long long first = 0, last = 0;
        std::string_view data;
    };
    /// False when malformed (terms out of order or empty, lengths past the end, a block whose
    /// header disagrees with its directory entry).
    static bool decode(std::string bytes, SegmentPack& out);
    /// The blocks of `term` in an encoded pack, viewing `bytes`, without decoding the pack:
    /// its directory is walked, only the term's blocks read. False when malformed.
    static bool find(std::string_view bytes, std::string_view term, std::vector<Block>& out);
    /// The first term of an encoded pack without decoding it; nullopt when malformed. A look-up
    /// of a term before it need not decode the pack.
    static std::optional<std::string_view> first_term(std::string_view bytes);
    /// The blocks of `term` in ordinal order; empty when the segment lacks it.
    std::vector<Block> term_blocks(std::string_view term) const;
    std::size_t terms() const { return terms_.size(); }
    /// Calls fn(term, block) for each block, in term and then ordinal order.
    template <class Fn>
    void each(Fn&& fn) const {
        for (const Term& t : terms_)
            for (std::size_t b = t.first_block; b < t.first_block + t.blocks; ++b)
                fn(view(t.at, t.size), block(b));
    }

private:
    // Offsets into bytes_, not views: a moved std::string may move its characters (SSO).
    struct Term {
        std::size_t at = 0, size = 0;
        std::size_t first_block = 0, blocks = 0;
    };
    struct BlockAt {
        long long first = 0, last = 0;
        std::size_t at = 0, size = 0;
    };
    std::string_view view(std::size_t at, std::size_t size) const {
        return std::string_view(bytes_).substr(at, size);
    }
    Block block(std::size_t i) const {
        return Block{blocks_[i].first, blocks_[i].last, view(blocks_[i].at, blocks_[i].size)};
    }
    std::string bytes_;
    std::vector<Term> terms_;
    std::vector<BlockAt> blocks_;
};

}  // namespace notesd
