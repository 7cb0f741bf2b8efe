#include "store/segment_block_reader.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <stdexcept>

#include "index/segment_pack.hpp"
#include "store/soci_stmt.hpp"
#include "store/sqlite_direct.hpp"

namespace notesd::detail {
namespace {

// A term's blocks of all the user's listed segments, by segment and then in ordinal
// (candidate) order: a seek per segment (schema 016 orders the blocks by segment, so that a new
// segment's are appended), the segments listed by the same statement, so that one committed
// since the caller's listing shows too (read_runs). A pack's row comes with no data (the caller
// keeps packs). A segment with neither rows of the term nor a pack comes as one row without a
// block (a LEFT JOIN): the term may be in one of its term groups (segment_pack.hpp), which the
// servers' statement reads at once, in its last column.
constexpr const char* kTermBlocksSql =
    "SELECT s.id, CASE WHEN b.segment_id IS NULL THEN 1 ELSE 0 END, CASE WHEN b.term = '' THEN "
    "SUBSTR(b.data, 1, 0) ELSE b.data END, CASE WHEN b.segment_id IS NULL THEN (SELECT g.data "
    "FROM segment_blocks g WHERE g.segment_id = s.id AND g.term >= :g AND g.term < :h ORDER BY "
    "g.term LIMIT 1) END FROM index_segments s LEFT JOIN segment_blocks b ON b.segment_id = s.id "
    "AND b.term IN (:t, '') WHERE s.user_id = :u AND s.note_count > 0 ORDER BY s.id, b.first_ord";
constexpr const char* kTermBlocksSqliteSql =
    "SELECT s.id, b.segment_id IS NULL, CASE WHEN b.term = '' THEN SUBSTR(b.data, 1, 0) ELSE "
    "b.data END FROM index_segments s LEFT JOIN segment_blocks b ON b.segment_id = s.id AND "
    "b.term IN (?2, '') WHERE s.user_id = ?1 AND s.note_count > 0 ORDER BY s.id, b.first_ord";
// The term group of a segment that a term without rows of its own (in a segment without a
// pack) would be in: the first group whose key is at or after the term's.
constexpr const char* kGroupSql =
    "SELECT data FROM segment_blocks WHERE segment_id = :s AND term >= :g AND term < :h AND NOT "
    "EXISTS (SELECT 1 FROM segment_blocks x WHERE x.segment_id = :s2 AND x.term IN (:t, '')) "
    "ORDER BY term LIMIT 1";
constexpr const char* kGroupSqliteSql =
    "SELECT data FROM segment_blocks WHERE segment_id = ?1 AND term >= ?2 AND term < ?3 AND NOT "
    "EXISTS (SELECT 1 FROM segment_blocks x WHERE x.segment_id = ?1 AND x.term IN (?4, '')) "
    "ORDER BY term LIMIT 1";
// A segment's pack: its only row, under the empty term.
constexpr const char* kPackSql = "SELECT data FROM segment_blocks WHERE segment_id = :s AND term = ''";
constexpr const char* kPackSqliteSql = "SELECT data FROM segment_blocks WHERE segment_id = ?1 AND term = ''";
// The block that holds ordinal ord if any does: the last one starting at or before it.
constexpr const char* kBlockAtSql =
    "SELECT first_ord, last_ord, data FROM segment_blocks WHERE user_id = ?1 AND term = ?2 AND "
    "segment_id = ?3 AND first_ord <= ?4 ORDER BY first_ord DESC LIMIT 1";

// A term's blocks in one segment of the user (SQLite: a seek per segment).
constexpr const char* kSegmentTermBlocksSql =
    "SELECT first_ord, last_ord, data FROM segment_blocks WHERE segment_id = ?1 AND term = ?2 AND "
    "user_id = ?3 ORDER BY first_ord";

// blocks_in's statement for `n` segments (the servers); a placeholder per segment, as below.
std::string blocks_in_sql(std::size_t n) {
    std::string sql = "SELECT segment_id, first_ord, last_ord, data FROM segment_blocks WHERE "
                      "user_id = :u AND term = :t AND segment_id IN (";
    for (std::size_t i = 0; i < n; ++i) sql += std::string(i ? ", " : "") + ":s" + std::to_string(i);
    return sql + ") ORDER BY segment_id, first_ord";
}

// blocks_at's statement for `keys` keys (the servers): the blocks holding one of the keys'
// ordinals. One OR of ranges rather than a UNION of a seek per key: MariaDB parses and plans
// each statement anew (SOCI's MySQL backend sends text), and 32 seeks took it 1.8 ms against
// 0.65 ms (PostgreSQL 1.2 + 0.4 ms against 0.5 + 0.3 ms). A placeholder binds one variable
// (SOCI's PostgreSQL backend), hence the numbered names.
std::string blocks_at_sql(std::size_t keys) {
    std::string sql = "SELECT segment_id, first_ord, last_ord, data FROM segment_blocks WHERE "
                      "user_id = :u AND term = :t AND (";
    for (std::size_t i = 0; i < keys; ++i) {
        const std::string n = std::to_string(i);
        sql += std::string(i ? " OR " : "") + "(segment_id = :s" + n + " AND first_ord <= :o" + n +
               " AND last_ord >= :p" + n + ")";
    }
    return sql + ") ORDER BY segment_id, first_ord";
}

// fn(first, last, data) for each block of `term` in a term group's row (in ordinal order),
// until fn returns false; false then. Throws when the group is malformed.
template <class Fn>
bool each_group_block(long long segment_id, std::string_view group, const std::string& term, Fn&& fn) {
    const std::optional<std::string_view> first = SegmentPack::first_term(group);
    if (!first) throw std::runtime_error("index segment " + std::to_string(segment_id) + ": malformed term group");
    if (term < *first) return true;  // between two groups: not in the segment
    std::vector<SegmentPack::Block> blocks;
    if (!SegmentPack::find(group, term, blocks))
        throw std::runtime_error("index segment " + std::to_string(segment_id) + ": malformed term group");
    for (const SegmentPack::Block& b : blocks)
        if (!fn(b.first, b.last, b.data)) return false;
    return true;
}

// The blocks of a term group holding one of the keys' ordinals (keys of one segment, sorted),
// each once: what blocks_at gives of a row.
template <class Fn>
void group_blocks_at(long long segment_id, std::string_view group, const std::string& term,
                     const BlockKey* keys, std::size_t n, Fn&& fn) {
    std::size_t k = 0;
    each_group_block(segment_id, group, term, [&](long long first, long long last, std::string_view data) {
        while (k < n && keys[k].ord < first) ++k;
        if (k == n) return false;
        if (keys[k].ord <= last) fn(segment_id, first, last, data);
        return true;
    });
}

class SociBlockReader final : public SegmentBlockReader {
public:
    SociBlockReader(soci::session& s, const Dialect& d) : session_(s), dialect_(d) {}
    std::optional<std::string_view> notes_table(long long segment_id) override {
        if (!notes_)
            notes_.emplace(Prep(session_, "SELECT notes FROM index_segment_notes WHERE segment_id = :s")
                               .out(data_).in(segment_, "s").done());
        segment_ = segment_id;
        if (!fetch_one(*notes_)) return std::nullopt;
        if (!dialect_.blob_result(data_))
            throw std::runtime_error("index segment " + std::to_string(segment_id) + ": malformed notes table");
        return std::string_view(data_);
    }
    std::optional<std::string> pack(long long segment_id) override {
        if (!pack_) pack_.emplace(Prep(session_, kPackSql).out(data_).in(segment_, "s").done());
        segment_ = segment_id;
        if (!fetch_one(*pack_)) return std::nullopt;
        if (!dialect_.blob_result(data_))
            throw std::runtime_error("index segment " + std::to_string(segment_id) + ": malformed pack");
        return std::move(data_);  // the next fetch into data_ assigns it anew
    }
    bool blocks(long long user_id, const std::string& term,
                const std::function<bool(long long, std::string_view)>& fn) override {
        if (!st_)
            st_.emplace(Prep(session_, kTermBlocksSql).out(segment_).out(no_row_).out(data_, data_ind_)
                            .out(group_, group_ind_).in(group_from_, "g").in(group_to_, "h")
                            .in(term_, "t").in(user_, "u").done());
        set_term(user_id, term);
        bool ok = true;
        st_->execute();
        while (st_->fetch()) {
            if (no_row_ == 0) {
                if (!(ok = dialect_.blob_result(data_)) || !fn(segment_, data_)) break;
            } else if (group_ind_ == soci::i_ok) {
                if (!(ok = dialect_.blob_result(group_))) break;
                if (!each_group_block(segment_, group_, term, [&](long long, long long, std::string_view d) {
                        return fn(segment_, d);
                    }))
                    break;
            }
        }
        end_read(*st_);
        return ok;
    }
    void blocks_at(long long user_id, const std::string& term, const std::vector<BlockKey>& keys,
                   const std::function<void(long long, long long, long long, std::string_view)>& fn)
        override {
        set_term(user_id, term);
        std::vector<long long> found;  // segments with a block: the others may hold the term in a group
        padded_runs(keys.size(), [&](std::size_t slot, std::size_t i) {
            key_segment_[slot] = keys[i].segment_id, key_ord_[slot] = keys[i].ord;
        }, [&](std::size_t power) -> soci::statement& { return at_statement(power); }, noting(found, fn));
        for (std::size_t i = 0, end = 0; i < keys.size(); i = end) {
            for (end = i; end < keys.size() && keys[end].segment_id == keys[i].segment_id;) ++end;
            if (std::find(found.begin(), found.end(), keys[i].segment_id) == found.end() && group(keys[i].segment_id))
                group_blocks_at(keys[i].segment_id, group_, term, &keys[i], end - i, fn);
        }
    }
    void blocks_in(long long user_id, const std::string& term, const std::vector<long long>& ids,
                   const std::function<void(long long, long long, long long, std::string_view)>& fn)
        override {
        set_term(user_id, term);
        std::vector<long long> found;
        padded_runs(ids.size(), [&](std::size_t slot, std::size_t i) { key_segment_[slot] = ids[i]; },
                    [&](std::size_t power) -> soci::statement& { return in_statement(power); },
                    noting(found, fn));
        for (long long id : ids)
            if (std::find(found.begin(), found.end(), id) == found.end() && group(id))
                each_group_block(id, group_, term, [&](long long first, long long last, std::string_view d) {
                    fn(id, first, last, d);
                    return true;
                });
    }
    void drop_statements() override {
        group_st_.reset();
        st_.reset();
        notes_.reset();
        pack_.reset();
        for (std::optional<soci::statement>& s : at_) s.reset();
        for (std::optional<soci::statement>& s : in_) s.reset();
    }

private:
    void set_term(long long user_id, const std::string& term) {
        user_ = user_id, term_ = term;
        group_from_ = group_key(term);
    }
    // fn, noting in `found` each segment it is called for.
    static std::function<void(long long, long long, long long, std::string_view)> noting(
        std::vector<long long>& found,
        const std::function<void(long long, long long, long long, std::string_view)>& fn) {
        return [&found, &fn](long long id, long long first, long long last, std::string_view data) {
            if (found.empty() || found.back() != id) found.push_back(id);
            fn(id, first, last, data);
        };
    }
    // The term group of the segment that term_ would be in, into group_ (kGroupSql); false when
    // there is none: a round trip, only for a segment that had no block of the term.
    bool group(long long segment_id) {
        if (!group_st_)
            group_st_.emplace(Prep(session_, kGroupSql).out(group_).in(group_segment_, "s")
                                  .in(group_from_, "g").in(group_to_, "h").in(group_segment_, "s2")
                                  .in(term_, "t").done());
        group_segment_ = segment_id;
        if (!fetch_one(*group_st_)) return false;
        if (!dialect_.blob_result(group_)) throw std::runtime_error("malformed index term group");
        return true;
    }
    static constexpr std::size_t kPowers = 6;  // 1, 2, 4 ... kBlockKeysMax keys
    static_assert(kBlockKeysMax == std::size_t{1} << (kPowers - 1), "a statement per power of two");
    // The statements take a power of two of keys (the last one repeated), so few are prepared:
    // `n` keys in runs of at most kBlockKeysMax, fill(slot, key) binding each, then the run's
    // statement(power) read, fn for each block.
    template <class Fill, class Statement>
    void padded_runs(std::size_t n, const Fill& fill, const Statement& statement,
                     const std::function<void(long long, long long, long long, std::string_view)>& fn) {
        for (std::size_t from = 0; from < n; from += kBlockKeysMax) {
            const std::size_t count = std::min(kBlockKeysMax, n - from);
            std::size_t power = 0;
            while ((std::size_t{1} << power) < count) ++power;
            for (std::size_t slot = 0; slot < (std::size_t{1} << power); ++slot)
                fill(slot, from + std::min(slot, count - 1));
            soci::statement& st = statement(power);
            st.execute();
            while (st.fetch()) {
                if (!dialect_.blob_result(data_)) throw std::runtime_error("malformed index segment block");
                fn(segment_, first_, last_, data_);
            }
            end_read(st);
        }
    }
    soci::statement& in_statement(std::size_t power) {
        return keyed_statement(in_.at(power), power, blocks_in_sql, [&](Prep& q, std::size_t i) {
            q.in(key_segment_[i], ("s" + std::to_string(i)).c_str());
        });
    }
    soci::statement& at_statement(std::size_t power) {
        return keyed_statement(at_.at(power), power, blocks_at_sql, [&](Prep& q, std::size_t i) {
            const std::string n = std::to_string(i);
            q.in(key_segment_[i], ("s" + n).c_str()).in(key_ord_[i], ("o" + n).c_str())
                .in(key_ord_[i], ("p" + n).c_str());
        });
    }
    // The statement kept in `slot` for 2^power keys, prepared at its first use from sql(keys),
    // bind(q, i) binding key i's variables.
    template <class Sql, class Bind>
    soci::statement& keyed_statement(std::optional<soci::statement>& slot, std::size_t power,
                                     const Sql& sql, const Bind& bind) {
        if (slot) return *slot;
        const std::size_t keys = std::size_t{1} << power;
        Prep q(session_, sql(keys));
        q.out(segment_).out(first_).out(last_).out(data_).in(user_, "u").in(term_, "t");
        for (std::size_t i = 0; i < keys; ++i) bind(q, i);
        slot.emplace(q.done());
        return *slot;
    }

    soci::session& session_;
    const Dialect& dialect_;
    std::optional<soci::statement> st_, notes_, pack_, group_st_;
    std::array<std::optional<soci::statement>, kPowers> at_, in_;
    long long user_ = 0, segment_ = 0, first_ = 0, last_ = 0, no_row_ = 0, group_segment_ = 0;
    std::array<long long, kBlockKeysMax> key_segment_{}, key_ord_{};
    std::string term_, data_, group_, group_from_, group_to_ = group_keys_end();
    soci::indicator data_ind_ = soci::i_ok, group_ind_ = soci::i_ok;
};

class SqliteBlockReader final : public SegmentBlockReader {
public:
    explicit SqliteBlockReader(soci::session& s) : session_(s) {}
    // Read with incremental blob I/O into a buffer kept for the next table: a first search in
    // a fresh worker touched each 4 KB page of SQLite's assembled copy and of SOCI's string for
    // the first time (doc/benchmarks.md, "The first search after a restart").
    std::optional<std::string_view> notes_table(long long segment_id) override {
        if (!read_blob(session_, "index_segment_notes", "notes", segment_id, notes_)) return std::nullopt;
        return std::string_view(notes_.data(), notes_.size());
    }
    std::optional<std::string> pack(long long segment_id) override {
        SqliteStmt& st = prepared_once(session_, pack_, kPackSqliteSql);
        st.bind(1, segment_id);
        if (!st.step()) return std::nullopt;
        std::string bytes(st.blob(0));
        st.reset();
        return bytes;
    }
    bool blocks(long long user_id, const std::string& term,
                const std::function<bool(long long, std::string_view)>& fn) override {
        SqliteStmt& st = prepared_once(session_, st_, kTermBlocksSqliteSql);
        st.bind(1, user_id).bind(2, term);
        while (st.step()) {
            const long long id = st.i64(0);
            const bool go = st.i64(1) == 0
                                ? fn(id, st.blob(2))
                                : in_group(id, term, [&](long long, long long, std::string_view d) { return fn(id, d); });
            if (!go) {
                st.reset();
                break;
            }
        }
        return true;
    }
    // A seek per key (no round trips to save), a block that the previous key found skipped.
    // The block found may end before the key's ordinal (which then lies between blocks). A
    // segment where a key finds no block at all may hold the term in a group.
    void blocks_at(long long user_id, const std::string& term, const std::vector<BlockKey>& keys,
                   const std::function<void(long long, long long, long long, std::string_view)>& fn)
        override {
        SqliteStmt& st = prepared_once(session_, at_, kBlockAtSql);
        long long seg = 0, first = -1, looked = 0;
        for (std::size_t i = 0; i < keys.size(); ++i) {
            const BlockKey& k = keys[i];
            st.bind(1, user_id).bind(2, term).bind(3, k.segment_id).bind(4, k.ord);
            const bool found = st.step();
            if (found && st.i64(1) >= k.ord && !(k.segment_id == seg && st.i64(0) == first)) {
                seg = k.segment_id, first = st.i64(0);
                fn(seg, first, st.i64(1), st.blob(2));
            }
            st.reset();
            if (found || looked == k.segment_id) continue;
            looked = k.segment_id;
            std::size_t end = i;
            while (end < keys.size() && keys[end].segment_id == k.segment_id) ++end;
            SqliteStmt& g = group_statement(k.segment_id, term);
            if (g.step()) group_blocks_at(k.segment_id, g.blob(0), term, &keys[i], end - i, fn);
            g.reset();
        }
    }
    void blocks_in(long long user_id, const std::string& term, const std::vector<long long>& ids,
                   const std::function<void(long long, long long, long long, std::string_view)>& fn)
        override {
        SqliteStmt& st = prepared_once(session_, in_, kSegmentTermBlocksSql);
        for (long long id : ids) {
            st.bind(1, id).bind(2, term).bind(3, user_id);
            bool any = false;
            while (st.step()) {
                any = true;
                fn(id, st.i64(0), st.i64(1), st.blob(2));
            }
            if (!any)
                in_group(id, term, [&](long long first, long long last, std::string_view d) {
                    fn(id, first, last, d);
                    return true;
                });
        }
    }
    void drop_statements() override {
        group_.reset();
        st_.reset();
        at_.reset();
        in_.reset();
        pack_.reset();
    }

private:
    // kGroupSqliteSql bound for the term in the segment, ready to step.
    SqliteStmt& group_statement(long long segment_id, const std::string& term) {
        SqliteStmt& g = prepared_once(session_, group_, kGroupSqliteSql);
        group_from_ = group_key(term);  // bound SQLITE_STATIC: kept until the next bind
        g.bind(1, segment_id).bind(2, group_from_).bind(3, group_to_).bind(4, term);
        return g;
    }
    // each_group_block over the term's group in the segment, if it has one.
    template <class Fn>
    bool in_group(long long segment_id, const std::string& term, Fn&& fn) {
        SqliteStmt& g = group_statement(segment_id, term);
        bool go = true;
        if (g.step()) go = each_group_block(segment_id, g.blob(0), term, fn);
        g.reset();
        return go;
    }

    soci::session& session_;
    std::unique_ptr<SqliteStmt> st_, at_, in_, pack_, group_;
    std::string group_from_, group_to_ = group_keys_end();
    BlobBuffer notes_;
};

}  // namespace

std::unique_ptr<SegmentBlockReader> make_segment_block_reader(Backend backend, soci::session& s,
                                                              const Dialect& d) {
    if (backend == Backend::Sqlite) return std::make_unique<SqliteBlockReader>(s);
    return std::make_unique<SociBlockReader>(s, d);
}

}  // namespace notesd::detail
