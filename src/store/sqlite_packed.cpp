#include "store/sqlite_packed.hpp"

#include <soci/soci.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <unordered_set>

#include "base/log.hpp"
#include "index/postings_format.hpp"
#include "store/sqlite_direct.hpp"

namespace notesd::detail {

namespace {

// ---- block codec: a format byte, then per row the key, created_us as 8 raw bytes each and the
// small numbers as LEB128 varints (zigzag for signed ones) ----

void put_varint(std::string& out, unsigned long long v) {
    while (v >= 0x80) {
        out.push_back(static_cast<char>((v & 0x7F) | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<char>(v));
}

unsigned long long zigzag(long long v) {
    return (static_cast<unsigned long long>(v) << 1) ^ static_cast<unsigned long long>(v >> 63);
}

long long unzigzag(unsigned long long v) {
    return static_cast<long long>(v >> 1) ^ -static_cast<long long>(v & 1);
}

void put_fixed(std::string& out, long long v) {
    char b[8];
    std::memcpy(b, &v, 8);
    out.append(b, 8);
}

class Reader {
public:
    explicit Reader(std::string_view d) : p_(d.data()), end_(d.data() + d.size()) {}
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

constexpr char kBlockFormat = 1;  // the first byte of every block

// Calls fn(row, pos) for each of the n rows in order (row.pos left empty, pos a view into
// data); fn returns false to stop. False when the data is malformed.
template <class Fn>
bool each_row(std::string_view data, long long n, Fn&& fn) {
    if (data.empty() || data[0] != kBlockFormat) return false;
    Reader r(data.substr(1));
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

// ---- SQLite statements ----

using Stmt = SqliteStmt;

void bind_key(Stmt& st, int i, const ListKey& k) {  // ?i, ?i+1, ?i+2
    st.bind(i, k.us).bind(i + 1, k.hi).bind(i + 2, k.lo);
}

ListKey key_at(const Stmt& st, int c) { return ListKey{st.i64(c), st.i64(c + 1), st.i64(c + 2)}; }

constexpr char kKeyOrder[] = " ORDER BY lo_us DESC, lo_hi DESC, lo_lo DESC";
constexpr char kRowRange[] = " (updated_us, uid_hi, uid_lo) >= (?3, ?4, ?5) AND "
                             "(updated_us, uid_hi, uid_lo) < (?6, ?7, ?8)";
constexpr char kRowOrder[] = " ORDER BY updated_us DESC, uid_hi DESC, uid_lo DESC";

std::string sql(std::initializer_list<const char*> parts) {
    std::string out;
    for (const char* p : parts) out += p;
    return out;
}

bool passes(const PackedPosting& r, const PostingsWindow& w) {
    return r.updated_us >= w.umin && r.updated_us <= w.umax && r.created_us >= w.cmin &&
           r.created_us <= w.cmax && (w.mask == 0 || (r.flags & w.mask) != 0);
}

}  // namespace

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
    return each_row(data, n, [&](const PackedPosting& r, std::string_view pos) {
        out.push_back(r);
        out.back().pos.assign(pos);
        return true;
    });
}

struct PackedPostings::Impl {
    explicit Impl(soci::session& s_) : s(s_) {}
    /// The statement, prepared on first use (SqliteStmt refuses a session that is not SQLite).
    Stmt& get(std::unique_ptr<Stmt>& st, const std::string& text) {
        return prepared_once(s, st, text);
    }
    soci::session& s;
    std::unique_ptr<Stmt> blocks, gap_rows, gap_rows_all, pack_rows, chain, insert, any, cover, drop_id,
        drop_term, terms, packed_terms;
};

PackedPostings::PackedPostings(soci::session& s) : impl_(std::make_unique<Impl>(s)) {}
PackedPostings::~PackedPostings() = default;

void PackedPostings::read(long long user_id, const std::string& term, const PostingsWindow& w,
                          long long limit, bool with_positions, std::vector<TermPosting>& out) {
    if (limit <= 0) return;
    Impl& m = *impl_;
    const std::size_t want = out.size() + static_cast<std::size_t>(limit);
    // The rows of a range no block covers, through the primary key as term_postings reads them
    // (without a filter, the scan skips the filter columns).
    static const std::string kGapSql = sql({"SELECT uid_hi, uid_lo, updated_us, tfs, lens, pos FROM "
                                            "postings WHERE user_id = ?1 AND term = ?2 AND", kRowRange,
                                            " AND updated_us >= ?10 AND updated_us <= ?11 AND "
                                            "created_us >= ?12 AND created_us <= ?13 AND (?14 = 0 OR "
                                            "(flags & ?14) <> 0)", kRowOrder, " LIMIT ?9"});
    static const std::string kGapAllSql = sql({"SELECT uid_hi, uid_lo, updated_us, tfs, lens, pos FROM "
                                               "postings WHERE user_id = ?1 AND term = ?2 AND",
                                               kRowRange, kRowOrder, " LIMIT ?9"});
    const bool filtered = !(w == PostingsWindow{});
    Stmt& rows = filtered ? m.get(m.gap_rows, kGapSql) : m.get(m.gap_rows_all, kGapAllSql);
    auto read_gap = [&](const ListKey& from, const ListKey& to) {  // [from, to)
        if (from.us > w.umax || to.us < w.umin || out.size() >= want) return;
        rows.bind(1, user_id).bind(2, term);
        bind_key(rows, 3, from);
        bind_key(rows, 6, to);
        rows.bind(9, static_cast<long long>(want - out.size()));
        if (filtered)
            rows.bind(10, w.umin).bind(11, w.umax).bind(12, w.cmin).bind(13, w.cmax).bind(14, w.mask);
        while (rows.step()) {
            out.push_back(unpack_posting(rows.i64(0), rows.i64(1), rows.i64(2), rows.i64(3), rows.i64(4),
                                         with_positions ? std::string(rows.text(5)) : std::string()));
        }
    };
    static const std::string kBlocksSql = sql({"SELECT lo_us, lo_hi, lo_lo, hi_us, hi_hi, hi_lo, n, "
                                               "data FROM postings_packed WHERE user_id = ?1 AND "
                                               "term = ?2 AND lo_us <= ?3", kKeyOrder});
    Stmt& blocks = m.get(m.blocks, kBlocksSql);
    blocks.bind(1, user_id).bind(2, term).bind(3, w.umax);
    ListKey expect = kListEnd;  // the lowest key read so far: the next block should end there
    bool done = false;
    while (!done && blocks.step()) {
        const ListKey lo = key_at(blocks, 0), hi = key_at(blocks, 3);
        if (hi != expect) read_gap(hi, expect);
        if (out.size() >= want) {
            blocks.reset();
            return;
        }
        const long long n = blocks.i64(6);
        const std::size_t before = out.size();
        if (out.capacity() < out.size() + static_cast<std::size_t>(n))  // grow by 4x, not 2x
            out.reserve(std::min(want, std::max(out.size() + static_cast<std::size_t>(n), 4 * out.capacity())));
        const bool ok = each_row(blocks.blob(7), n, [&](const PackedPosting& r, std::string_view pos) {
            if (r.updated_us < w.umin) {
                done = true;
                return false;
            }
            if (!passes(r, w)) return true;
            TermPosting& p = out.emplace_back();
            p.uid_hi = r.uid_hi;
            p.uid_lo = r.uid_lo;
            p.updated_us = r.updated_us;
            p.title_tf = static_cast<int>(r.title_tf);
            p.body_tf = static_cast<int>(r.body_tf);
            p.title_len = static_cast<int>(r.title_len);
            p.body_len = static_cast<int>(r.body_len);
            if (with_positions) p.positions.assign(pos.data(), pos.size());
            return out.size() < want;
        });
        if (!ok) {  // only a bug or a damaged file does this; the rows of its range keep results exact
            log_warn("malformed postings block: its rows are read instead",
                     {{"user", user_id}, {"block_lo_us", lo.us}});
            out.resize(before);
            done = false;
            read_gap(lo, hi);
        }
        expect = lo;
        if (out.size() >= want || lo.us < w.umin) done = true;
    }
    if (done) {
        blocks.reset();
        return;
    }
    if (expect != kListStart) read_gap(kListStart, expect);
}

void PackedPostings::invalidate(long long user_id, const std::string& term,
                                const std::vector<ListKey>& keys) {
    Impl& m = *impl_;
    Stmt& any = m.get(m.any, "SELECT 1 FROM postings_packed WHERE user_id = ?1 AND term = ?2 LIMIT 1");
    any.bind(1, user_id).bind(2, term);
    if (!any.step()) return;  // nothing packed: most terms of a first import
    any.reset();
    static const std::string kCoverSql = sql({"SELECT id, hi_us, hi_hi, hi_lo FROM postings_packed "
                                              "WHERE user_id = ?1 AND term = ?2 AND (lo_us, lo_hi, "
                                              "lo_lo) <= (?3, ?4, ?5)", kKeyOrder, " LIMIT 1"});
    Stmt& cover = m.get(m.cover, kCoverSql);
    Stmt& drop = m.get(m.drop_id, "DELETE FROM postings_packed WHERE id = ?1");
    for (const ListKey& k : keys) {
        cover.bind(1, user_id).bind(2, term);
        bind_key(cover, 3, k);
        if (!cover.step()) continue;
        const long long id = cover.i64(0);
        const bool holds = k < key_at(cover, 1);
        cover.reset();
        if (holds) drop.bind(1, id).run();
    }
}

long long PackedPostings::pack_term(long long user_id, const std::string& term) {
    Impl& m = *impl_;
    // The gaps between the blocks there are, newest first.
    std::vector<std::pair<ListKey, ListKey>> gaps;  // [from, to)
    static const std::string kChainSql = sql({"SELECT lo_us, lo_hi, lo_lo, hi_us, hi_hi, hi_lo FROM "
                                              "postings_packed WHERE user_id = ?1 AND term = ?2",
                                              kKeyOrder});
    Stmt& chain = m.get(m.chain, kChainSql);
    chain.bind(1, user_id).bind(2, term);
    ListKey expect = kListEnd;
    while (chain.step()) {
        const ListKey lo = key_at(chain, 0), hi = key_at(chain, 3);
        if (hi != expect) gaps.emplace_back(hi, expect);
        expect = lo;
    }
    if (expect != kListStart) gaps.emplace_back(kListStart, expect);

    static const std::string kPackRowsSql = sql({"SELECT updated_us, uid_hi, uid_lo, created_us, "
                                                 "flags, tfs, lens, pos FROM postings WHERE "
                                                 "user_id = ?1 AND term = ?2 AND", kRowRange, kRowOrder});
    Stmt& rows = m.get(m.pack_rows, kPackRowsSql);
    Stmt& insert = m.get(m.insert, "INSERT INTO postings_packed (user_id, term, lo_us, lo_hi, lo_lo, "
                                   "hi_us, hi_hi, hi_lo, n, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
                                   "?7, ?8, ?9, ?10)");
    long long written = 0;
    std::vector<PackedPosting> block;
    for (const auto& [from, to] : gaps) {
        // Blocks of kPackRows rows from the newest down; the last one reaches down to `from`,
        // so the blocks tile [from, to) (an empty gap gets one empty block).
        ListKey top = to;
        auto flush = [&](const ListKey& bottom) {
            const std::string data = encode_block(block);
            insert.bind(1, user_id).bind(2, term);
            bind_key(insert, 3, bottom);
            bind_key(insert, 6, top);
            insert.bind(9, static_cast<long long>(block.size())).bind_blob(10, data).run();
            ++written;
            top = bottom;
            block.clear();
        };
        rows.bind(1, user_id).bind(2, term);
        bind_key(rows, 3, from);
        bind_key(rows, 6, to);
        while (rows.step()) {
            if (block.size() == kPackRows) flush(ListKey{block.back().updated_us, block.back().uid_hi,
                                                         block.back().uid_lo});
            const long long tfs = rows.i64(5), lens = rows.i64(6);
            block.push_back(PackedPosting{rows.i64(0), rows.i64(1), rows.i64(2), rows.i64(3),
                                          rows.i64(4), pair_first(tfs), pair_second(tfs),
                                          pair_first(lens), pair_second(lens),
                                          std::string(rows.text(7))});
        }
        flush(from);
    }
    return written;
}

long long PackedPostings::pack_user(long long user_id) {
    Impl& m = *impl_;
    std::vector<std::string> pack;
    std::unordered_set<std::string> known;
    Stmt& terms = m.get(m.terms, "SELECT term, df FROM term_df WHERE user_id = ?1");
    terms.bind(1, user_id);
    while (terms.step()) {
        std::string t(terms.text(0));
        if (terms.i64(1) >= kPackMinDf) pack.push_back(t);
        known.insert(std::move(t));
    }
    // Blocks of terms no note holds any more (what their last rows left: empty blocks).
    std::vector<std::string> gone;
    Stmt& packed = m.get(m.packed_terms, "SELECT DISTINCT term FROM postings_packed WHERE user_id = ?1");
    packed.bind(1, user_id);
    while (packed.step())
        if (std::string t(packed.text(0)); !known.count(t)) gone.push_back(std::move(t));
    Stmt& drop = m.get(m.drop_term, "DELETE FROM postings_packed WHERE user_id = ?1 AND term = ?2");
    for (const std::string& t : gone) drop.bind(1, user_id).bind(2, t).run();
    long long written = 0;
    for (const std::string& t : pack) written += pack_term(user_id, t);
    return written;
}

}  // namespace notesd::detail
