#include "store/segment_block_writer.hpp"

#include "store/soci_stmt.hpp"

namespace notesd::detail {

static_assert(kBlockRowsMax == std::size_t{1} << 6, "one prepared statement per power of two");

soci::statement& SegmentBlockWriter::statement(std::size_t power) {
    std::optional<soci::statement>& slot = statements_.at(power);
    if (slot) return *slot;
    const std::size_t rows = std::size_t{1} << power;
    std::string sql = "INSERT INTO segment_blocks (user_id, term, segment_id, first_ord, last_ord, "
                      "data) VALUES ";
    std::vector<std::string> names;
    for (std::size_t i = 0; i < rows; ++i) {
        const std::string n = std::to_string(i);
        // a placeholder binds one variable (SOCI's PostgreSQL backend): names are per row
        for (const char* col : {"u", "t", "s", "f", "l", "d"}) names.push_back(col + n);
        sql += std::string(i ? ", (" : "(") + ":u" + n + ", :t" + n + ", :s" + n + ", :f" + n +
               ", :l" + n + ", " + dialect_.blob_value(":d" + n) + ")";
    }
    Prep q(session_, sql);
    for (std::size_t i = 0; i < rows; ++i) {
        const std::string* at = &names[6 * i];
        q.in(user_id_, at[0].c_str()).in(term_[i], at[1].c_str()).in(segment_id_, at[2].c_str())
            .in(first_[i], at[3].c_str()).in(last_[i], at[4].c_str()).in(data_[i], at[5].c_str());
    }
    slot.emplace(q.done());
    return *slot;
}

std::size_t SegmentBlockWriter::rows_at(const std::vector<SegmentBlock>& blocks,
                                        std::size_t from) const {
    std::size_t n = kBlockRowsMax;
    while (n > blocks.size() - from) n /= 2;
    for (;;) {
        std::size_t bytes = 0;
        for (std::size_t i = from; i < from + n; ++i) bytes += blocks[i].data.size();
        if (n == 1 || bytes <= kBlockBytesMax) return n;
        n /= 2;
    }
}

void SegmentBlockWriter::insert(long long user_id, long long segment_id,
                                std::vector<SegmentBlock>& blocks) {
    user_id_ = user_id;
    segment_id_ = segment_id;
    for (std::size_t from = 0; from < blocks.size();) {
        const std::size_t n = rows_at(blocks, from);
        std::size_t power = 0;
        while ((std::size_t{1} << power) < n) ++power;
        for (std::size_t i = 0; i < n; ++i) {
            SegmentBlock& b = blocks[from + i];
            term_[i] = std::move(b.term);
            first_[i] = b.bounds.first;
            last_[i] = b.bounds.last;
            data_[i] = dialect_.blob_param(b.data);
        }
        exec(statement(power));
        from += n;
    }
    for (std::string& d : data_) std::string().swap(d);  // a segment's worth of blobs
}

void SegmentBlockWriter::drop_statements() {
    for (std::optional<soci::statement>& s : statements_) s.reset();
}

}  // namespace notesd::detail
