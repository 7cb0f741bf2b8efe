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
#include <string>
#include <string_view>
#include <vector>

#include "index/segment.hpp"

namespace notesd {

/// Segments whose blocks take at most this many bytes are written as one pack.
constexpr std::size_t kSegmentPackBytes = std::size_t{1} << 20;

/// Encodes blocks given in term order (bytewise), each term's in ordinal order, as one pack.
std::string encode_segment_pack(const std::vector<SegmentBlock>& blocks);

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
