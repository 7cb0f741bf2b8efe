// How the search index is stored and read. One implementation per storage strategy, chosen
// once when a SociStore opens (make_index_strategy):
//  - RowIndex (index_rows.hpp): every read is SQL through SOCI over the postings, term_df,
//    notes and snapshots tables; the server backends.
//  - SqliteIndex (index_sqlite.hpp): RowIndex's statistics and collection-filtered postings,
//    plus SQLite's own API on the hot path (sqlite_direct.hpp), packed postings blocks
//    (sqlite_packed.hpp), snapshot rows in a file of their own and read transactions.
// SociStore calls a strategy inside its error guard and owns the write transaction; the
// strategy owns its prepared statements and forgets them in drop_statements.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "index/segment.hpp"
#include "store/dialect.hpp"
#include "store/store.hpp"

namespace soci {
class session;
}

namespace notesd::detail {

/// A postings row's key within one user: the candidate order (term, updated_us, uuid).
struct PostingKey {
    std::string term;
    long long updated_us = 0, uid_hi = 0, uid_lo = 0;
    bool operator<(const PostingKey& o) const {
        if (int c = term.compare(o.term)) return c < 0;
        if (updated_us != o.updated_us) return updated_us < o.updated_us;
        return uid_hi != o.uid_hi ? uid_hi < o.uid_hi : uid_lo < o.uid_lo;
    }
};

struct PrebuiltSegment;  // soci_stmt.hpp

/// Index changes of one write transaction, applied in key order so B-tree neighbours are
/// written together. Changes of one key (a note written twice in a batch) net out in order.
struct IndexDelta {
    struct Op {
        PostingKey key;
        bool add = false;  // else remove
        long long note_id = 0, created_us = 0, flags = 0, tfs = 0, lens = 0;
        std::string pos;
    };
    std::vector<Op> ops;                            // in the order made
    /// The notes added go into `segment` (or stand in `prebuilt`) instead of postings rows (a
    /// large batch).
    bool to_segment = false;
    /// The notes written go into pending rows (store/pending_notes.hpp): an API write.
    bool to_pending = false;
    /// The user had no pending row when the transaction began and writes none: a batch need
    /// not look one up per note (a round trip each on the servers).
    bool none_pending = false;
    SegmentBuilder segment;
    /// A segment of the batch built before the transaction (SociStore::prepare_batch) while it
    /// still holds the notes written; nullptr once a note turned out not to be new.
    PrebuiltSegment* prebuilt = nullptr;
    std::vector<std::pair<std::string, int>> df;    // (term, +1 or -1)
    long long notes = 0, collections = 0, title_tokens = 0, body_tokens = 0;

    void remove(PostingKey k) { ops.push_back(Op{std::move(k), false, 0, 0, 0, 0, 0, {}}); }
    void add(PostingKey k, long long note_id, long long created_us, long long flags, long long tfs,
             long long lens, std::string pos) {
        ops.push_back(Op{std::move(k), true, note_id, created_us, flags, tfs, lens, std::move(pos)});
    }
};

/// The id of the user's collection with this uuid (and its maintained note count); 0 when
/// unknown. SociStore's, so the collections table's statements stay in one place.
using CollectionLookup =
    std::function<long long(long long user_id, const std::string& uuid, long long* note_count)>;

class IndexStrategy : public SearchIndex, public SearchSnapshots, public HitReader {
public:
    /// Statements run after the dialect's on every new or reconnected session.
    virtual std::vector<std::string> session_setup(const DbTarget&) { return {}; }
    /// Before the schema migrations run, outside their transactions: what the migration
    /// scripts may name must be there (SQLite: the attached snapshots file, `snap`).
    virtual void before_migration() {}
    /// Forgets every prepared statement (after a database error, before any reconnect, and
    /// before a migration changes the schema).
    virtual void drop_statements() = 0;

    /// Whether begin_read_view opens a real view (then SociStore pairs it with end_read_view).
    virtual bool has_read_views() const { return false; }
    virtual void begin_read_view() {}
    /// Ends the view; throws when the database refuses (SociStore then rolls back).
    virtual void end_read_view() {}

    /// In the write transaction, before the postings rows at these keys change (ops sorted by
    /// key): a read-optimised copy holding any of them must not outlive the change.
    virtual void before_postings_write(long long /*user_id*/,
                                       const std::vector<IndexDelta::Op>& /*ops*/) {}
    /// Whether the strategy keeps a read-optimised copy that pack_user brings up to date.
    virtual bool keeps_packed_copy() const { return false; }
    /// In the caller's write transaction; returns the blocks written.
    virtual long long pack_user(long long /*user_id*/) { return 0; }
    /// notesctl check, in the caller's transaction: each term whose read-optimised copy of the
    /// user's postings does not read exactly as the rows do (one line each); none without a copy.
    virtual std::vector<std::string> check_packed_copy(long long /*user_id*/) { return {}; }
};

class Segments;
std::unique_ptr<IndexStrategy> make_index_strategy(Backend backend, soci::session& session,
                                                   const Dialect& dialect, Segments& segments,
                                                   CollectionLookup find_collection);

}  // namespace notesd::detail
