// The search index on SQLite (index_strategy.hpp): RowIndex's statistics and
// collection-filtered postings, and on the hot path SQLite's own API without SOCI's per-row
// exchange (sqlite_direct.hpp): postings from packed blocks (sqlite_packed.hpp), one seek per
// listed note for postings_at, stored index fields and result items, snapshot rows in a file
// of their own (FILE-snapshots, attached as `snap`), and read transactions for ReadScope.
#pragma once
#include <memory>

#include "store/index_rows.hpp"
#include "store/sqlite_direct.hpp"
#include "store/sqlite_packed.hpp"

namespace notesd::detail {

/// SqliteIndex's own statements, each prepared on first use.
struct SqliteIndexStatements {
    explicit SqliteIndexStatements(soci::session& s) : session(s), packed(s) {}
    SqliteStmt& posting_at_key();
    SqliteStmt& indexed_note();
    SqliteStmt& hit();
    SqliteStmt& begin_read();
    SqliteStmt& commit_read();
    SqliteStmt& snapshot_insert();
    SqliteStmt& snapshot_find();
    SqliteStmt& snapshot_purge();

    soci::session& session;
    PackedPostings packed;
    NoteRow hit_row;

private:
    std::unique_ptr<SqliteStmt> posting_at_key_, indexed_note_, hit_;
    std::unique_ptr<SqliteStmt> begin_read_, commit_read_;
    std::unique_ptr<SqliteStmt> snapshot_insert_, snapshot_find_, snapshot_purge_;
};

class SqliteIndex final : public RowIndex {
public:
    using RowIndex::RowIndex;

    std::vector<IndexedNote> indexed_notes(long long user_id,
                                           const std::vector<std::string>& ids) override;
    std::vector<SearchHit> notes_by_ids(long long user_id, const std::vector<std::string>& ids,
                                        bool with_content) override;
    void save_snapshot(const SnapshotRecord& s) override;
    std::optional<SnapshotRecord> find_snapshot(long long user_id, const std::string& id,
                                                long long now_us) override;
    int purge_snapshots(long long now_us, int max_rows) override;

    /// Runs nothing: notes where the snapshots file is, which snapshots() attaches.
    std::vector<std::string> session_setup(const DbTarget& t) override;
    /// Attaches the snapshots file (schema 007 drops a table there).
    void before_migration() override { snapshots(); }
    void drop_statements() override;
    bool has_read_views() const override { return true; }
    void begin_read_view() override;
    void end_read_view() override;
    void before_postings_write(long long user_id, const std::vector<IndexDelta::Op>& ops) override;
    bool keeps_packed_copy() const override { return true; }
    long long pack_user(long long user_id) override;
    std::vector<std::string> check_packed_copy(long long user_id) override;

protected:
    /// From the packed blocks and the rows no block covers yet.
    std::vector<TermPosting> postings_of_term(long long user_id, const std::string& term,
                                              const SearchFilter& f, int limit,
                                              bool with_positions) override;
    /// One seek per listed note.
    std::vector<TermPosting> rows_postings_at(long long user_id, const std::string& term,
                                              const std::vector<PostingNote>& notes) override;

private:
    SqliteIndexStatements& own();
    /// own(), after attaching the snapshots file as `snap` (created when missing, with its
    /// table) at a connection's first snapshot read or write, and again after a failure: a
    /// snapshots file that cannot be opened or written fails searches only, never the lists,
    /// and a new connection (SociStore opens one after such a fault) attaches it again.
    SqliteIndexStatements& snapshots();
    std::unique_ptr<SqliteIndexStatements> own_;
    std::vector<std::string> attach_sql_;  ///< ATTACH, then its setup; empty: no snapshots file
    std::string snapshots_file_;
    std::string model_file_;  ///< the main file, whose owner and mode a new snapshots file gets
    bool snap_attached_ = false;  ///< ATTACH done on this connection
    bool snap_ready_ = false;     ///< and the setup after it
};

}  // namespace notesd::detail
