#include "index/packed_block.hpp"

#include <stdexcept>

namespace notesd {
using detail::kBlockFormat;
using detail::put_fixed;
using detail::put_varint;
using detail::zigzag;

std::string encode_block(const std::vector<PackedPosting>& rows) {
    std::string out(1, kBlockFormat);
    out.reserve(1 + rows.size() * 48);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const PackedPosting& r = rows[i];
        if (i > 0 && r.updated_us > rows[i - 1].updated_us)
            throw std::invalid_argument("block rows must be newest first");
        if (r.title_tf < 0 || r.body_tf < 0 || r.title_len < 0 || r.body_len < 0)
            throw std::invalid_argument("negative term count in a block row");
        put_fixed(out, r.updated_us);
        put_fixed(out, r.uid_hi);
        put_fixed(out, r.uid_lo);
        put_fixed(out, r.created_us);
        put_varint(out, zigzag(r.flags));
        put_varint(out, static_cast<unsigned long long>(r.title_tf));
        put_varint(out, static_cast<unsigned long long>(r.body_tf));
        put_varint(out, static_cast<unsigned long long>(r.title_len));
        put_varint(out, static_cast<unsigned long long>(r.body_len));
        put_varint(out, r.pos.size());
        out += r.pos;
    }
    return out;
}

bool decode_block(std::string_view data, long long n, std::vector<PackedPosting>& out) {
    return detail::each_block_row(data, n, [&](const PackedPosting& r, std::string_view pos) {
        out.push_back(r);
        out.back().pos.assign(pos);
        return true;
    });
}

}  // namespace notesd
