#include "store/segment_block_reader.hpp"

#include <array>
#include <optional>
#include <stdexcept>

#include "store/soci_stmt.hpp"
#include "store/sqlite_direct.hpp"

namespace notesd::detail {
namespace {

// A term's blocks of all the user's listed segments, by segment and then in ordinal
// (candidate) order: a seek per segment (schema 016 orders the blocks by segment, so that a new
// segment's are appended), the segments listed by the same statement, so that one committed
// since the caller's listing shows too (read_runs). A pack's row comes with no data (the caller
// keeps packs). The same statement with SOCI's named placeholders and SQLite's numbered ones.
constexpr const char* kTermBlocksSql =
    "SELECT segment_id, CASE WHEN term = '' THEN SUBSTR(data, 1, 0) ELSE data END FROM "
    "segment_blocks WHERE segment_id IN (SELECT id FROM index_segments WHERE user_id = :u AND "
    "note_count > 0) AND term IN (:t, '') ORDER BY segment_id, first_ord";
constexpr const char* kTermBlocksSqliteSql =
    "SELECT segment_id, CASE WHEN term = '' THEN SUBSTR(data, 1, 0) ELSE data END FROM "
    "segment_blocks WHERE segment_id IN (SELECT id FROM index_segments WHERE user_id = ?1 AND "
    "note_count > 0) AND term IN (?2, '') ORDER BY segment_id, first_ord";
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
            st_.emplace(Prep(session_, kTermBlocksSql).out(segment_).out(data_).in(user_, "u")
                            .in(term_, "t").done());
        user_ = user_id, term_ = term;
        bool ok = true;
        st_->execute();
        while (st_->fetch())
            if (!(ok = dialect_.blob_result(data_)) || !fn(segment_, data_)) break;
        end_read(*st_);
        return ok;
    }
    void blocks_at(long long user_id, const std::string& term, const std::vector<BlockKey>& keys,
                   const std::function<void(long long, long long, long long, std::string_view)>& fn)
        override {
        user_ = user_id, term_ = term;
        padded_runs(keys.size(), [&](std::size_t slot, std::size_t i) {
            key_segment_[slot] = keys[i].segment_id, key_ord_[slot] = keys[i].ord;
        }, [&](std::size_t power) -> soci::statement& { return at_statement(power); }, fn);
    }
    void blocks_in(long long user_id, const std::string& term, const std::vector<long long>& ids,
                   const std::function<void(long long, long long, long long, std::string_view)>& fn)
        override {
        user_ = user_id, term_ = term;
        padded_runs(ids.size(), [&](std::size_t slot, std::size_t i) { key_segment_[slot] = ids[i]; },
                    [&](std::size_t power) -> soci::statement& { return in_statement(power); }, fn);
    }
    void drop_statements() override {
        st_.reset();
        notes_.reset();
        pack_.reset();
        for (std::optional<soci::statement>& s : at_) s.reset();
        for (std::optional<soci::statement>& s : in_) s.reset();
    }

private:
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
    std::optional<soci::statement> st_, notes_, pack_;
    std::array<std::optional<soci::statement>, kPowers> at_, in_;
    long long user_ = 0, segment_ = 0, first_ = 0, last_ = 0;
    std::array<long long, kBlockKeysMax> key_segment_{}, key_ord_{};
    std::string term_, data_;
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
        while (st.step())
            if (!fn(st.i64(0), st.blob(1))) {
                st.reset();
                break;
            }
        return true;
    }
    // A seek per key (no round trips to save), a block that the previous key found skipped.
    // The block found may end before the key's ordinal (which then lies between blocks).
    void blocks_at(long long user_id, const std::string& term, const std::vector<BlockKey>& keys,
                   const std::function<void(long long, long long, long long, std::string_view)>& fn)
        override {
        SqliteStmt& st = prepared_once(session_, at_, kBlockAtSql);
        long long seg = 0, first = -1;
        for (const BlockKey& k : keys) {
            st.bind(1, user_id).bind(2, term).bind(3, k.segment_id).bind(4, k.ord);
            if (st.step() && st.i64(1) >= k.ord && !(k.segment_id == seg && st.i64(0) == first)) {
                seg = k.segment_id, first = st.i64(0);
                fn(seg, first, st.i64(1), st.blob(2));
            }
            st.reset();
        }
    }
    void blocks_in(long long user_id, const std::string& term, const std::vector<long long>& ids,
                   const std::function<void(long long, long long, long long, std::string_view)>& fn)
        override {
        SqliteStmt& st = prepared_once(session_, in_, kSegmentTermBlocksSql);
        for (long long id : ids) {
            st.bind(1, id).bind(2, term).bind(3, user_id);
            while (st.step()) fn(id, st.i64(0), st.i64(1), st.blob(2));
        }
    }
    void drop_statements() override {
        st_.reset();
        at_.reset();
        in_.reset();
        pack_.reset();
    }

private:
    soci::session& session_;
    std::unique_ptr<SqliteStmt> st_, at_, in_, pack_;
    BlobBuffer notes_;
};

}  // namespace

std::unique_ptr<SegmentBlockReader> make_segment_block_reader(Backend backend, soci::session& s,
                                                              const Dialect& d) {
    if (backend == Backend::Sqlite) return std::make_unique<SqliteBlockReader>(s);
    return std::make_unique<SociBlockReader>(s, d);
}

}  // namespace notesd::detail
