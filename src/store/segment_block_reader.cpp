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
// since the caller's listing shows too (read_runs). The same statement with SOCI's named
// placeholders and SQLite's numbered ones.
constexpr const char* kTermBlocksSql =
    "SELECT segment_id, data FROM segment_blocks WHERE segment_id IN (SELECT id FROM "
    "index_segments WHERE user_id = :u AND note_count > 0) AND term = :t ORDER BY segment_id, "
    "first_ord";
constexpr const char* kTermBlocksSqliteSql =
    "SELECT segment_id, data FROM segment_blocks WHERE segment_id IN (SELECT id FROM "
    "index_segments WHERE user_id = ?1 AND note_count > 0) AND term = ?2 ORDER BY segment_id, "
    "first_ord";
// The block that holds ordinal ord if any does: the last one starting at or before it.
constexpr const char* kBlockAtSql =
    "SELECT first_ord, last_ord, data FROM segment_blocks WHERE user_id = ?1 AND term = ?2 AND "
    "segment_id = ?3 AND first_ord <= ?4 ORDER BY first_ord DESC LIMIT 1";

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
        for (std::size_t from = 0; from < keys.size(); from += kBlockKeysMax) {
            const std::size_t n = std::min(kBlockKeysMax, keys.size() - from);
            std::size_t power = 0;
            while ((std::size_t{1} << power) < n) ++power;
            for (std::size_t i = 0; i < (std::size_t{1} << power); ++i) {  // padded: a key again
                const BlockKey& k = keys[from + std::min(i, n - 1)];
                key_segment_[i] = k.segment_id, key_ord_[i] = k.ord;
            }
            soci::statement& st = at_statement(power);
            st.execute();
            while (st.fetch()) {
                if (!dialect_.blob_result(data_)) throw std::runtime_error("malformed index segment block");
                fn(segment_, first_, last_, data_);
            }
            end_read(st);
        }
    }
    void drop_statements() override {
        st_.reset();
        notes_.reset();
        for (std::optional<soci::statement>& s : at_) s.reset();
    }

private:
    static constexpr std::size_t kPowers = 6;  // 1, 2, 4 ... kBlockKeysMax keys
    static_assert(kBlockKeysMax == std::size_t{1} << (kPowers - 1), "a statement per power of two");
    soci::statement& at_statement(std::size_t power) {
        std::optional<soci::statement>& slot = at_.at(power);
        if (slot) return *slot;
        const std::size_t keys = std::size_t{1} << power;
        Prep q(session_, blocks_at_sql(keys));
        q.out(segment_).out(first_).out(last_).out(data_).in(user_, "u").in(term_, "t");
        for (std::size_t i = 0; i < keys; ++i) {
            const std::string n = std::to_string(i);
            q.in(key_segment_[i], ("s" + n).c_str()).in(key_ord_[i], ("o" + n).c_str())
                .in(key_ord_[i], ("p" + n).c_str());
        }
        slot.emplace(q.done());
        return *slot;
    }

    soci::session& session_;
    const Dialect& dialect_;
    std::optional<soci::statement> st_, notes_;
    std::array<std::optional<soci::statement>, kPowers> at_;
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
    void drop_statements() override {
        st_.reset();
        at_.reset();
    }

private:
    soci::session& session_;
    std::unique_ptr<SqliteStmt> st_, at_;
    BlobBuffer notes_;
};

}  // namespace

std::unique_ptr<SegmentBlockReader> make_segment_block_reader(Backend backend, soci::session& s,
                                                              const Dialect& d) {
    if (backend == Backend::Sqlite) return std::make_unique<SqliteBlockReader>(s);
    return std::make_unique<SociBlockReader>(s, d);
}

}  // namespace notesd::detail
