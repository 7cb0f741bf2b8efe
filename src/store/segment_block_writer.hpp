// Writes a new segment's blocks (segments.hpp) several rows an INSERT: on the server backends
// every statement is a round trip, and a segment of an import batch has thousands of blocks.
#pragma once
#include <soci/soci.h>

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "index/segment.hpp"
#include "store/dialect.hpp"

namespace notesd::detail {

/// Most blocks one INSERT writes (a power of two: a statement is prepared per power).
constexpr std::size_t kBlockRowsMax = 64;
/// About the most block bytes one INSERT carries (fewer rows when large blocks would exceed
/// it; a single block may be larger): well under the servers' packet limits.
constexpr std::size_t kBlockBytesMax = 1 << 20;

class SegmentBlockWriter {
public:
    SegmentBlockWriter(soci::session& s, const Dialect& d) : session_(s), dialect_(d) {}
    SegmentBlockWriter(const SegmentBlockWriter&) = delete;
    SegmentBlockWriter& operator=(const SegmentBlockWriter&) = delete;
    /// Inserts the blocks (in the caller's transaction); their terms and data are moved out.
    void insert(long long user_id, long long segment_id, std::vector<SegmentBlock>& blocks);
    void drop_statements();

private:
    /// The INSERT of 2^power rows, prepared on first use.
    soci::statement& statement(std::size_t power);
    /// How many of the blocks from `from` on the next INSERT takes (a power of two).
    std::size_t rows_at(const std::vector<SegmentBlock>& blocks, std::size_t from) const;

    soci::session& session_;
    const Dialect& dialect_;
    // SOCI binds addresses: the row variables never move (sized once, never resized).
    long long user_id_ = 0, segment_id_ = 0;
    std::vector<std::string> term_ = std::vector<std::string>(kBlockRowsMax);
    std::vector<std::string> data_ = std::vector<std::string>(kBlockRowsMax);
    std::vector<long long> first_ = std::vector<long long>(kBlockRowsMax);
    std::vector<long long> last_ = std::vector<long long>(kBlockRowsMax);
    std::array<std::optional<soci::statement>, 7> statements_;  // 1, 2, 4 ... 64 rows
};

}  // namespace notesd::detail
