// Packed postings on SQLite (schema 006): a read-optimised copy of the postings rows.
//
// Reading a term's postings row by row costs SQLite a B-tree step and a row decode per row;
// decoding the same rows from blobs of up to kPackRows rows costs a fraction of that. The rows
// stay the truth and every write goes to them as before; postings_packed holds blocks, each an
// exact copy of the rows of one (user, term) whose key (updated_us, uid_hi, uid_lo) lies in
// the block's range [lo, hi). A term's blocks never overlap, and:
//  - a write of any postings row first deletes the block whose range holds the row's key, in
//    the same transaction (invalidate), so a block is never stale;
//  - a reader takes blocks where they are and the rows of every range no block covers (a gap),
//    so it sees exactly the rows, in the same order, whatever has been packed;
//  - pack_user fills the gaps of a user's terms with new blocks (notesctl after its writes,
//    the 006 migration for all users). Terms in fewer than kPackMinDf notes are left as rows.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/model.hpp"
#include "index/packed_block.hpp"

namespace soci {
class session;
}

namespace notesd::detail {

constexpr std::size_t kPackRows = 128;  ///< postings per block at most
constexpr long long kPackMinDf = 64;    ///< terms in fewer notes stay unpacked

/// A position in a term's list: the postings key after (user_id, term).
struct ListKey {
    long long updated_us = 0, hi = 0, lo = 0;  ///< hi, lo: the note's uuid_halves
    bool operator<(const ListKey& o) const {
        if (updated_us != o.updated_us) return updated_us < o.updated_us;
        return hi != o.hi ? hi < o.hi : lo < o.lo;
    }
    bool operator==(const ListKey& o) const {
        return updated_us == o.updated_us && hi == o.hi && lo == o.lo;
    }
    bool operator!=(const ListKey& o) const { return !(*this == o); }
};
/// Below / above every key of a real posting: the outer bounds of a term's tiling.
constexpr ListKey kListStart{INT64_MIN, INT64_MIN, INT64_MIN};
constexpr ListKey kListEnd{INT64_MAX, INT64_MAX, INT64_MAX};

/// The filters of term_postings without collections (SearchFilter's bounds and flags).
struct PostingsWindow {
    long long updated_min = INT64_MIN, updated_max = INT64_MAX;
    long long created_min = INT64_MIN, created_max = INT64_MAX;
    long long flags_any = 0;
    bool operator==(const PostingsWindow& o) const {
        return updated_min == o.updated_min && updated_max == o.updated_max &&
               created_min == o.created_min && created_max == o.created_max &&
               flags_any == o.flags_any;
    }
};

class PackedPostings {
public:
    /// On the session's SQLite connection (is_sqlite_session); statements prepared on first use.
    explicit PackedPostings(soci::session& s);
    ~PackedPostings();
    PackedPostings(const PackedPostings&) = delete;
    PackedPostings& operator=(const PackedPostings&) = delete;

    /// Appends the user's postings of `term` that pass `w`, newest first, at most `limit`:
    /// the rows term_postings' SQL scan returns, in its order (without positions unless asked).
    void read(long long user_id, const std::string& term, const PostingsWindow& w, long long limit,
              bool with_positions, std::vector<TermPosting>& out);
    /// Deletes the blocks whose ranges hold these keys of the user's `term` (sorted or not),
    /// before the rows at those keys change; in the writing transaction.
    void invalidate(long long user_id, const std::string& term, const std::vector<ListKey>& keys);
    /// Fills the gaps of the user's terms in at least kPackMinDf notes with blocks, and deletes
    /// the (empty) blocks of terms no note holds any more; in the caller's write transaction.
    /// Returns blocks written.
    long long pack_user(long long user_id);
    /// The same for one term (whatever its df); returns blocks written.
    long long pack_term(long long user_id, const std::string& term);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace notesd::detail
