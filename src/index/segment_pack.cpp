#include "index/segment_pack.hpp"

#include <algorithm>

#include "index/packed_block.hpp"

namespace notesd {

namespace {

constexpr char kPackFormat = 'K';

}  // namespace

std::string encode_segment_pack(const std::vector<SegmentBlock>& blocks) {
    std::string out(1, kPackFormat);
    std::size_t terms = 0;
    for (std::size_t i = 0; i < blocks.size(); ++i)
        if (i == 0 || blocks[i].term != blocks[i - 1].term) ++terms;
    detail::put_varint(out, terms);
    std::size_t data = 0;
    for (std::size_t i = 0; i < blocks.size();) {
        std::size_t end = i;
        while (end < blocks.size() && blocks[end].term == blocks[i].term) ++end;
        detail::put_varint(out, blocks[i].term.size());
        out += blocks[i].term;
        detail::put_varint(out, end - i);
        for (; i < end; ++i) {
            const SegmentBlockBounds& b = blocks[i].bounds;
            detail::put_varint(out, static_cast<unsigned long long>(b.first));
            detail::put_varint(out, static_cast<unsigned long long>(b.last - b.first));
            detail::put_varint(out, blocks[i].data.size());
            data += blocks[i].data.size();
        }
    }
    out.reserve(out.size() + data);
    for (const SegmentBlock& b : blocks) out += b.data;
    return out;
}

bool SegmentPack::decode(std::string bytes, SegmentPack& out) {
    out = SegmentPack();
    out.bytes_ = std::move(bytes);
    const std::string_view all(out.bytes_);
    if (all.empty() || all[0] != kPackFormat) return false;
    detail::BlockReader r(all.substr(1));
    unsigned long long terms = 0;
    if (!r.varint(terms) || terms > all.size()) return false;
    out.terms_.reserve(static_cast<std::size_t>(terms));
    std::string_view previous, term;
    std::size_t data = 0;  // the blocks' bytes, from the end of the directory
    for (unsigned long long t = 0; t < terms; ++t) {
        unsigned long long len = 0, n = 0;
        if (!r.varint(len) || len == 0 || !r.bytes(static_cast<std::size_t>(len), term) ||
            (t > 0 && !(previous < term)) || !r.varint(n) || n == 0 || n > all.size())
            return false;
        previous = term;
        out.terms_.push_back(Term{static_cast<std::size_t>(term.data() - all.data()), term.size(),
                                  out.blocks_.size(), static_cast<std::size_t>(n)});
        for (unsigned long long b = 0; b < n; ++b) {
            unsigned long long first = 0, span = 0, size = 0;
            if (!r.varint(first) || !r.varint(span) || !r.varint(size) ||
                first > detail::kMaxSegmentCount || span > detail::kMaxSegmentCount || size > all.size())
                return false;
            out.blocks_.push_back(BlockAt{static_cast<long long>(first),
                                          static_cast<long long>(first + span), data,
                                          static_cast<std::size_t>(size)});
            data += static_cast<std::size_t>(size);
        }
    }
    // What is left is the blocks' data, exactly.
    std::string_view rest;
    const std::size_t directory = all.size() - data;
    if (data > all.size() - 1 || !r.bytes(data, rest) || !r.done()) return false;
    for (BlockAt& b : out.blocks_) {
        b.at += directory;
        SegmentBlockBounds bounds;
        if (!read_block_bounds(out.view(b.at, b.size), bounds) || bounds.first != b.first ||
            bounds.last != b.last)
            return false;
    }
    return true;
}

std::optional<std::string_view> SegmentPack::first_term(std::string_view bytes) {
    if (bytes.empty() || bytes[0] != kPackFormat) return std::nullopt;
    detail::BlockReader r(bytes.substr(1));
    unsigned long long terms = 0, len = 0;
    std::string_view term;
    if (!r.varint(terms) || terms == 0 || !r.varint(len) || len == 0 ||
        !r.bytes(static_cast<std::size_t>(len), term))
        return std::nullopt;
    return term;
}

std::vector<SegmentPack::Block> SegmentPack::term_blocks(std::string_view term) const {
    std::vector<Block> out;
    const auto it = std::lower_bound(terms_.begin(), terms_.end(), term, [&](const Term& t, std::string_view x) {
        return view(t.at, t.size) < x;
    });
    if (it == terms_.end() || view(it->at, it->size) != term) return out;
    out.reserve(it->blocks);
    for (std::size_t b = it->first_block; b < it->first_block + it->blocks; ++b) out.push_back(block(b));
    return out;
}

std::string group_key(std::string_view last_term) {
    std::string key(1, kGroupKeyMark);
    key += last_term;
    return key;
}

std::string group_keys_end() { return std::string(1, static_cast<char>(kGroupKeyMark + 1)); }

bool is_group_key(std::string_view term) { return !term.empty() && term[0] == kGroupKeyMark; }

void TermGrouper::add(SegmentBlock&& block) {
    if (!term_.empty() && block.term != term_.front().term) end_term();
    term_bytes_ += block.data.size();
    term_.push_back(std::move(block));
}

void TermGrouper::end_term() {
    if (term_.empty()) return;
    const std::string& term = term_.front().term;
    if (term_bytes_ >= kGroupTermBytes || term.empty() || is_group_key(term)) {
        for (SegmentBlock& b : term_) sink_(std::move(b));
    } else {
        group_bytes_ += term_bytes_ + term.size();
        for (SegmentBlock& b : term_) group_.push_back(std::move(b));
        if (group_bytes_ >= kGroupBytes) end_group();
    }
    term_.clear();
    term_bytes_ = 0;
}

void TermGrouper::end_group() {
    if (group_.empty()) return;
    SegmentBlock row;
    row.term = group_key(group_.back().term);
    row.bounds.first = 0;
    row.bounds.last = -1;  // as a pack's row: it covers no ordinal of its own
    row.data = encode_segment_pack(group_);
    group_.clear();
    group_bytes_ = 0;
    sink_(std::move(row));
}

void TermGrouper::finish() {
    end_term();
    end_group();
}

std::vector<SegmentBlock> group_terms(std::vector<SegmentBlock>&& blocks) {
    std::vector<SegmentBlock> rows;
    TermGrouper g([&](SegmentBlock&& b) { rows.push_back(std::move(b)); });
    for (SegmentBlock& b : blocks) g.add(std::move(b));
    g.finish();
    blocks.clear();
    return rows;
}

}  // namespace notesd
