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

namespace {

// Walks an encoded pack's directory: on_term(term, blocks) for each term, then on_block(first,
// last, at, size) for each of its blocks, `at` counted from the start of the blocks' data, whose
// offset in the pack goes to data_at. False when malformed (the blocks' headers unread).
template <class OnTerm, class OnBlock>
bool walk_directory(std::string_view all, std::size_t& data_at, OnTerm&& on_term, OnBlock&& on_block) {
    if (all.empty() || all[0] != kPackFormat) return false;
    detail::BlockReader r(all.substr(1));
    unsigned long long terms = 0;
    if (!r.varint(terms) || terms > all.size()) return false;
    std::string_view previous, term;
    std::size_t data = 0;  // the blocks' bytes, from the end of the directory
    for (unsigned long long t = 0; t < terms; ++t) {
        unsigned long long len = 0, n = 0;
        if (!r.varint(len) || len == 0 || !r.bytes(static_cast<std::size_t>(len), term) ||
            (t > 0 && !(previous < term)) || !r.varint(n) || n == 0 || n > all.size())
            return false;
        previous = term;
        on_term(term, static_cast<std::size_t>(n));
        for (unsigned long long b = 0; b < n; ++b) {
            unsigned long long first = 0, span = 0, size = 0;
            if (!r.varint(first) || !r.varint(span) || !r.varint(size) ||
                first > detail::kMaxSegmentCount || span > detail::kMaxSegmentCount || size > all.size())
                return false;
            on_block(static_cast<long long>(first), static_cast<long long>(first + span), data,
                     static_cast<std::size_t>(size));
            data += static_cast<std::size_t>(size);
        }
    }
    // What is left is the blocks' data, exactly.
    std::string_view rest;
    data_at = all.size() - data;
    return data <= all.size() - 1 && r.bytes(data, rest) && r.done();
}

// Whether a block's header agrees with its directory entry.
bool header_agrees(std::string_view block, long long first, long long last) {
    SegmentBlockBounds bounds;
    return read_block_bounds(block, bounds) && bounds.first == first && bounds.last == last;
}

}  // namespace

bool SegmentPack::decode(std::string bytes, SegmentPack& out) {
    out = SegmentPack();
    out.bytes_ = std::move(bytes);
    const std::string_view all(out.bytes_);
    std::size_t directory = 0;
    const bool walked = walk_directory(
        all, directory,
        [&](std::string_view term, std::size_t n) {
            out.terms_.push_back(Term{static_cast<std::size_t>(term.data() - all.data()), term.size(),
                                      out.blocks_.size(), n});
        },
        [&](long long first, long long last, std::size_t at, std::size_t size) {
            out.blocks_.push_back(BlockAt{first, last, at, size});
        });
    if (!walked) return false;
    for (BlockAt& b : out.blocks_) {
        b.at += directory;
        if (!header_agrees(out.view(b.at, b.size), b.first, b.last)) return false;
    }
    return true;
}

bool SegmentPack::find(std::string_view bytes, std::string_view term, std::vector<Block>& out) {
    out.clear();
    bool mine = false;
    std::vector<BlockAt> at;  // the term's blocks, offsets from the blocks' data
    std::size_t directory = 0;
    if (!walk_directory(
            bytes, directory, [&](std::string_view t, std::size_t) { mine = t == term; },
            [&](long long first, long long last, std::size_t offset, std::size_t size) {
                if (mine) at.push_back(BlockAt{first, last, offset, size});
            }))
        return false;
    for (const BlockAt& b : at) {
        out.push_back(Block{b.first, b.last, bytes.substr(directory + b.at, b.size)});
        if (!header_agrees(out.back().data, b.first, b.last)) return false;
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
        // its blocks, its bytes, its directory entry (at most three varints of three bytes a
        // block, two of the term); the pack's header, at most four bytes
        const std::size_t bytes = term_bytes_ + term.size() + 9 * term_.size() + 6;
        if (group_bytes_ + bytes + 4 > kGroupBytes) end_group();
        group_bytes_ += bytes;
        for (SegmentBlock& b : term_) group_.push_back(std::move(b));
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
