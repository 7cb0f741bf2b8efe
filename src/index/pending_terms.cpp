// Format (after a format byte and the number of terms): per term its length and bytes, then for a pending entry's
// terms its title and body counts and its positions' length and bytes, all LEB128 varints.
// Empty lists encode as the empty string.
#include "index/pending_terms.hpp"

#include "index/packed_block.hpp"

namespace notesd {
namespace {

constexpr char kTermsFormat = 'T';
constexpr char kNamesFormat = 'N';
// A term, a positions list or a count above these is malformed (a field holds at most
// 2^31 - 1 terms; stored terms are short).
constexpr unsigned long long kMaxBytes = 1ULL << 24;
constexpr unsigned long long kMaxCount = (1ULL << 31) - 1;

bool read_bytes(detail::BlockReader& r, std::string& out) {
    unsigned long long n = 0;
    std::string_view s;
    if (!r.varint(n) || n > kMaxBytes || !r.bytes(static_cast<std::size_t>(n), s)) return false;
    out.assign(s);
    return true;
}

void put_bytes(std::string& out, std::string_view s) {
    detail::put_varint(out, s.size());
    out.append(s);
}

}  // namespace

std::string encode_pending_terms(const std::vector<SegmentTerm>& terms) {
    if (terms.empty()) return {};
    std::string out(1, kTermsFormat);
    detail::put_varint(out, terms.size());
    for (const SegmentTerm& t : terms) {
        put_bytes(out, t.term);
        detail::put_varint(out, static_cast<unsigned long long>(t.title_tf));
        detail::put_varint(out, static_cast<unsigned long long>(t.body_tf));
        put_bytes(out, t.pos);
    }
    return out;
}

bool decode_pending_terms(std::string_view data, std::vector<SegmentTerm>& out) {
    out.clear();
    if (data.empty()) return true;
    if (data[0] != kTermsFormat) return false;
    detail::BlockReader r(data.substr(1));
    unsigned long long n = 0;
    // every term takes 4 bytes at least
    if (!r.varint(n) || n == 0 || n > data.size() / 4) return false;
    out.reserve(static_cast<std::size_t>(n));
    for (; n > 0; --n) {
        SegmentTerm t;
        unsigned long long title = 0, body = 0;
        if (!read_bytes(r, t.term) || !r.varint(title) || !r.varint(body) || title > kMaxCount ||
            body > kMaxCount || !read_bytes(r, t.pos))
            return false;
        if (!out.empty() && !(out.back().term < t.term)) return false;
        t.title_tf = static_cast<long long>(title);
        t.body_tf = static_cast<long long>(body);
        out.push_back(std::move(t));
    }
    return r.done();
}

std::string encode_term_names(const std::vector<std::string>& names) {
    if (names.empty()) return {};
    std::string out(1, kNamesFormat);
    detail::put_varint(out, names.size());
    for (const std::string& n : names) put_bytes(out, n);
    return out;
}

bool decode_term_names(std::string_view data, std::vector<std::string>& out) {
    out.clear();
    if (data.empty()) return true;
    if (data[0] != kNamesFormat) return false;
    detail::BlockReader r(data.substr(1));
    unsigned long long count = 0;
    if (!r.varint(count) || count == 0 || count > data.size()) return false;
    out.reserve(static_cast<std::size_t>(count));
    for (; count > 0; --count) {
        std::string n;
        if (!read_bytes(r, n)) return false;
        if (!out.empty() && !(out.back() < n)) return false;
        out.push_back(std::move(n));
    }
    return r.done();
}

}  // namespace notesd
