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

// ---- SQLite statements ----

using Stmt = SqliteStmt;

void bind_key(Stmt& st, int i, const ListKey& k) {  // ?i, ?i+1, ?i+2
    st.bind(i, k.updated_us).bind(i + 1, k.hi).bind(i + 2, k.lo);
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
    return r.updated_us >= w.updated_min && r.updated_us <= w.updated_max && r.created_us >= w.created_min &&
           r.created_us <= w.created_max && (w.flags_any == 0 || (r.flags & w.flags_any) != 0);
}

}  // namespace

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
        if (from.updated_us > w.updated_max || to.updated_us < w.updated_min || out.size() >= want) return;
        rows.bind(1, user_id).bind(2, term);
        bind_key(rows, 3, from);
        bind_key(rows, 6, to);
        rows.bind(9, static_cast<long long>(want - out.size()));
        if (filtered)
            rows.bind(10, w.updated_min).bind(11, w.updated_max).bind(12, w.created_min).bind(13, w.created_max).bind(14, w.flags_any);
        while (rows.step()) {
            out.push_back(unpack_posting(rows.i64(0), rows.i64(1), rows.i64(2), rows.i64(3), rows.i64(4),
                                         with_positions ? std::string(rows.text(5)) : std::string()));
        }
    };
    static const std::string kBlocksSql = sql({"SELECT lo_us, lo_hi, lo_lo, hi_us, hi_hi, hi_lo, n, "
                                               "data FROM postings_packed WHERE user_id = ?1 AND "
                                               "term = ?2 AND lo_us <= ?3", kKeyOrder});
    Stmt& blocks = m.get(m.blocks, kBlocksSql);
    blocks.bind(1, user_id).bind(2, term).bind(3, w.updated_max);
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
        const bool ok = each_block_row(blocks.blob(7), n, [&](const PackedPosting& r, std::string_view pos) {
            if (r.updated_us < w.updated_min) {
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
                     {{"user", user_id}, {"block_lo_us", lo.updated_us}});
            out.resize(before);
            done = false;
            read_gap(lo, hi);
        }
        expect = lo;
        if (out.size() >= want || lo.updated_us < w.updated_min) done = true;
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
        // so the blocks tile [from, to) (an empty gap gets one empty block). Above the newest
        // row of a term nothing is packed: a note written later (a newer updated_us, as every
        // create and update of the API is) then lands in that gap instead of dropping the
        // newest block of each of its terms.
        ListKey top = to;
        const bool open_top = to == kListEnd;
        bool first = true;
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
            if (first && open_top && rows.i64(0) < INT64_MAX)
                top = ListKey{rows.i64(0) + 1, INT64_MIN, INT64_MIN};  // just above the newest
            first = false;
            if (block.size() == kPackRows) flush(ListKey{block.back().updated_us, block.back().uid_hi,
                                                         block.back().uid_lo});
            const long long tfs = rows.i64(5), lens = rows.i64(6);
            block.push_back(PackedPosting{rows.i64(0), rows.i64(1), rows.i64(2), rows.i64(3),
                                          rows.i64(4), pair_first(tfs), pair_second(tfs),
                                          pair_first(lens), pair_second(lens),
                                          std::string(rows.text(7))});
        }
        if (!(first && open_top)) flush(from);  // an empty open top stays a gap
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
