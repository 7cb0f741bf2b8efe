// The data of a packed postings block (store/sqlite_packed.hpp keeps them): a format byte, then
// per row the key and created_us as 8 raw bytes each and the small numbers as LEB128 varints
// (zigzag for signed ones), then the row's positions (index/positions.hpp) with their length.
// Pure format: no storage here.
#pragma once
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace notesd {

/// One postings row as a block holds it.
struct PackedPosting {
    long long updated_us = 0, uid_hi = 0, uid_lo = 0, created_us = 0, flags = 0;
    long long title_tf = 0, body_tf = 0, title_len = 0, body_len = 0;
    std::string pos;
};

/// The rows (newest first) as one block's data.
std::string encode_block(const std::vector<PackedPosting>& rows);
/// Decodes n rows of a block; false when the data is malformed (it is then not used).
bool decode_block(std::string_view data, long long n, std::vector<PackedPosting>& out);

namespace detail {

constexpr char kBlockFormat = 1;  ///< the first byte of every block

inline void put_varint(std::string& out, unsigned long long v) {
    while (v >= 0x80) {
        out.push_back(static_cast<char>((v & 0x7F) | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<char>(v));
}

inline unsigned long long zigzag(long long v) {
    return (static_cast<unsigned long long>(v) << 1) ^ static_cast<unsigned long long>(v >> 63);
}

inline void put_fixed(std::string& out, long long v) {
    char b[8];
    std::memcpy(b, &v, 8);
    out.append(b, 8);
}

inline long long unzigzag(unsigned long long v) {
    return static_cast<long long>(v >> 1) ^ -static_cast<long long>(v & 1);
}

/// Reads a block's fields in order; each read is false at the end of the data.
class BlockReader {
public:
    explicit BlockReader(std::string_view d) : p_(d.data()), end_(d.data() + d.size()) {}
    bool varint(unsigned long long& v) {
        if (p_ < end_ && static_cast<unsigned char>(*p_) < 0x80) {  // most values: one byte
            v = static_cast<unsigned char>(*p_++);
            return true;
        }
        v = 0;
        for (int shift = 0; shift < 64 && p_ < end_; shift += 7) {
            const auto b = static_cast<unsigned char>(*p_++);
            v |= static_cast<unsigned long long>(b & 0x7F) << shift;
            if (b < 0x80) return true;
        }
        return false;
    }
    bool signed_varint(long long& v) {
        unsigned long long u = 0;
        if (!varint(u)) return false;
        v = unzigzag(u);
        return true;
    }
    bool fixed(long long& v) {
        if (end_ - p_ < 8) return false;
        std::memcpy(&v, p_, 8);
        p_ += 8;
        return true;
    }
    bool bytes(std::size_t n, std::string_view& s) {
        if (static_cast<std::size_t>(end_ - p_) < n) return false;
        s = std::string_view(p_, n);
        p_ += n;
        return true;
    }
    bool done() const { return p_ == end_; }

private:
    const char* p_;
    const char* end_;
};


/// Calls fn(row, pos) for each of the n rows in order (row.pos left empty, pos a view into
// data); fn returns false to stop. False when the data is malformed.
template <class Fn>
bool each_block_row(std::string_view data, long long n, Fn&& fn) {
    if (data.empty() || data[0] != kBlockFormat) return false;
    BlockReader r(data.substr(1));
    PackedPosting row;
    for (long long i = 0; i < n; ++i) {
        unsigned long long tt = 0, bt = 0, tl = 0, bl = 0, len = 0;
        std::string_view pos;
        if (!r.fixed(row.updated_us) || !r.fixed(row.uid_hi) || !r.fixed(row.uid_lo) ||
            !r.fixed(row.created_us) || !r.signed_varint(row.flags) || !r.varint(tt) ||
            !r.varint(bt) || !r.varint(tl) || !r.varint(bl) || !r.varint(len) ||
            !r.bytes(static_cast<std::size_t>(len), pos))
            return false;
        row.title_tf = static_cast<long long>(tt);
        row.body_tf = static_cast<long long>(bt);
        row.title_len = static_cast<long long>(tl);
        row.body_len = static_cast<long long>(bl);
        if (!fn(static_cast<const PackedPosting&>(row), pos)) return true;
    }
    return r.done();
}


}  // namespace detail
}  // namespace notesd
