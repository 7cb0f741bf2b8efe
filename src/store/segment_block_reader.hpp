// Reads what segments store (segments.hpp): a term's blocks, the search's hot path, and a
// segment's notes table, read once per worker and segment. One implementation through SOCI for
// every backend, one through SQLite's own API (no per-row exchange, no copy of the blob), chosen
// once by make_segment_block_reader.
#pragma once
#include <soci/soci.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/model.hpp"
#include "store/dialect.hpp"

namespace notesd::detail {

/// An ordinal of a segment whose block blocks_at looks up.
struct BlockKey {
    long long segment_id = 0, ord = 0;
};

/// Most keys one blocks_at statement looks up on the servers (more take several); a
/// postings_at call asks at most kPostingsAtMax notes, each live in one segment.
constexpr std::size_t kBlockKeysMax = 32;

class SegmentBlockReader {
public:
    virtual ~SegmentBlockReader() = default;
    /// fn(segment_id, data) for each block of the user's `term`, by segment id and then in
    /// ordinal order, until fn returns false; false when a block's data is not in the
    /// backend's blob form. One statement for all the user's segments. A segment stored as a
    /// pack (segment_pack.hpp) shows as one call with empty data, whatever the term: its blocks
    /// are the caller's to find in the pack (without the pack's bytes on every read).
    virtual bool blocks(long long user_id, const std::string& term,
                        const std::function<bool(long long segment_id, std::string_view data)>& fn) = 0;
    /// fn(segment_id, first, last, data) once for each block of the user's `term` that holds
    /// a key's ordinal (its segment's, first <= ord <= last; a packed segment's keys find
    /// nothing), by segment and first ordinal; keys sorted by (segment, ord). Throws when a block's data is not in the backend's blob
    /// form. On the servers one statement per kBlockKeysMax keys.
    virtual void blocks_at(long long user_id, const std::string& term,
                           const std::vector<BlockKey>& keys,
                           const std::function<void(long long segment_id, long long first,
                                                    long long last, std::string_view data)>& fn) = 0;
    /// fn(segment_id, first, last, data) for each block of `term` in these segments of the
    /// user (ids ascending, none twice, none stored as a pack), by segment and first ordinal:
    /// what a worker keeps (term_block_cache.hpp). Throws when a block's data is not in the
    /// backend's blob form. On the servers one statement per kBlockKeysMax segments.
    virtual void blocks_in(long long user_id, const std::string& term,
                           const std::vector<long long>& segment_ids,
                           const std::function<void(long long segment_id, long long first,
                                                    long long last, std::string_view data)>& fn) = 0;
    /// The encoded notes table of a segment (index_segment_notes), valid until the next call;
    /// nullopt when there is no such segment (merged away since it was listed). Throws when the
    /// data is not in the backend's blob form.
    virtual std::optional<std::string_view> notes_table(long long segment_id) = 0;
    /// The segment's pack (segment_pack.hpp), for SegmentPack::decode to own; nullopt when
    /// its blocks are rows of their terms (or there is no such segment). Throws as notes_table.
    virtual std::optional<std::string> pack(long long segment_id) = 0;
    virtual void drop_statements() = 0;
};

std::unique_ptr<SegmentBlockReader> make_segment_block_reader(Backend backend, soci::session& s,
                                                              const Dialect& d);

}  // namespace notesd::detail
