// Internals of SociStore: the prepared-statement cache with the variables each statement binds
// (SOCI binds addresses, so these structs live behind a unique_ptr and never move), a small
// statement builder, and the error guard shared by soci_store.cpp and soci_write.cpp.
#pragma once
#include <soci/soci.h>

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <vector>

#include "store/soci_store.hpp"
#include "store/sqlite_direct.hpp"
#include "store/sqlite_packed.hpp"
#include "base/util.hpp"

namespace notesd {
namespace detail {

/// True when `sql` contains the placeholder `:name` (and not merely a longer name).
bool has_param(const std::string& sql, const std::string& name);

/// Builds a prepared statement; `in` binds a name only when the SQL uses it, so a dialect may
/// drop or add placeholders (e.g. `:k2` of an expanded keyset predicate).
class Prep {
public:
    Prep(soci::session& s, std::string sql) : st_(s), sql_(std::move(sql)) {}
    template <class T>
    Prep& in(T& v, const char* name) {
        if (has_param(sql_, name)) {
            st_.exchange(soci::use(v, name));
            bound_.push_back(name);
        }
        return *this;
    }
    template <class T>
    Prep& in(T& v, soci::indicator& ind, const char* name) {
        if (has_param(sql_, name)) {
            st_.exchange(soci::use(v, ind, name));
            bound_.push_back(name);
        }
        return *this;
    }
    template <class T>
    Prep& out(T& v) {
        st_.exchange(soci::into(v));
        return *this;
    }
    template <class T>
    Prep& out(T& v, soci::indicator& ind) {
        st_.exchange(soci::into(v, ind));
        return *this;
    }
    /// Appends the dialect's RETURNING clause and binds `id` to it when the dialect has one.
    Prep& returning_id(const Dialect& d, long long& id);
    /// Prepares; throws std::logic_error when a placeholder of the SQL was left unbound.
    soci::statement done();

private:
    soci::statement st_;
    std::string sql_;
    std::vector<std::string> bound_;
};

/// Executes a query and reads its first row; false when there is none. Runs the statement to
/// completion, because a SQLite statement left mid-result keeps its read snapshot open.
bool fetch_one(soci::statement& st);
/// Ends the statement's read on SQLite (sqlite3_reset) once its rows are consumed: a cached
/// statement that is merely exhausted keeps its read transaction, and with it an old snapshot
/// of the database, open until its next execute. No-op on the server backends.
void end_read(soci::statement& st);
/// Executes a statement that returns no rows.
inline void exec(soci::statement& st) { st.execute(true); }

/// A write transaction begun with the dialect's SQL; rolls back unless commit() ran.
class WriteTxn {
public:
    WriteTxn(soci::session& s, const std::string& begin) : s_(s) { s_ << begin; }
    ~WriteTxn() {
        if (done_) return;
        try {
            s_ << "ROLLBACK";
        } catch (...) {
            // the connection is gone or the transaction already ended; nothing to undo
        }
    }
    WriteTxn(const WriteTxn&) = delete;
    WriteTxn& operator=(const WriteTxn&) = delete;
    void commit() {
        s_ << "COMMIT";
        done_ = true;
    }

private:
    soci::session& s_;
    bool done_ = false;
};

struct NoteParams {
    long long u = 0, coll = 0, k = 0, k2 = 0, cmin = 0, cmax = 0, umin = 0, umax = 0;
    long long mask = 0, mask2 = 0, lim = 0;
    std::string kid;
};

struct NoteRow {
    std::string uuid, title, snippet, content, colls, audios;
    long long created = 0, updated = 0;
};

struct CollParams {
    long long u = 0, k = 0, k2 = 0, cmin = 0, cmax = 0, umin = 0, umax = 0, lim = 0;
    std::string kid;
};

struct CollRow {
    std::string uuid, title, description;
    soci::indicator desc_ind = soci::i_ok;
    long long created = 0, updated = 0, count = 0;
};

/// Statements of the request path. The list and count variants are prepared on first use.
struct ReadStmts {
    ReadStmts(soci::session& s, const Dialect& d);
    soci::statement& note_list(OrderBy o, bool in_collection, bool with_content);
    soci::statement& note_count(bool in_collection);
    soci::statement& coll_list(OrderBy o);
    soci::statement& coll_count();

    soci::session& s;
    const Dialect& d;
    NoteParams np;
    NoteRow nr;
    CollParams cp;
    CollRow cr;
    long long count = 0;
    std::string token_hash;
    long long tok_user = 0, tok_id = 0;
    long long u = 0, cid = 0, ccount = 0;
    std::string cuuid;
    long long user_notes = 0, user_colls = 0;
    soci::statement find_token, find_coll, user_counts;
    std::map<int, soci::statement> variants;
};

/// Rows per multi-row postings insert and term_df upsert: on a server backend an import's cost
/// is round trips, one per statement, and a note has about as many postings as distinct words.
constexpr std::size_t kBatchRows = 32;

/// One postings row of a multi-row insert.
struct PostingRow {
    std::string term;
    long long updated = 0, hi = 0, lo = 0, note = 0, created = 0, flags = 0, tfs = 0, lens = 0;
    std::string pos;  // positions.hpp's text form
};

/// Statements of write_batch and delete_note, sharing one set of bound variables.
struct WriteStmts {
    WriteStmts(soci::session& s, const Dialect& d);

    long long u = 0, id = 0, cid = 0, created = 0, updated = 0, flags = 0;
    long long delta = 0, dn = 0, dc = 0, dtt = 0, dbt = 0, new_id = 0;
    std::string uuid, cuuid, auuid, title, snippet, content, colls, audios, hash, kind, target;
    std::string description, title_terms, body_terms, plain_text;
    long long title_len = 0, body_len = 0;
    soci::indicator desc_ind = soci::i_ok;
    long long o_id = 0, o_created = 0, o_updated = 0, link = 0;
    std::string o_title, o_desc, o_hash;
    soci::indicator o_desc_ind = soci::i_ok;
    // the stored index of a note about to change (note_old_index)
    std::string on_title_terms, on_body_terms;
    long long on_title_len = 0, on_body_len = 0, on_created = 0, on_updated = 0, on_flags = 0;
    // one postings row / one term_df change
    std::string p_term;
    long long p_updated = 0, p_hi = 0, p_lo = 0;
    long long df_delta = 0, df_gone = 0;
    // rows of postings_insert_many / df_upsert_many; the first one also of posting_insert /
    // df_upsert_one (tfs and lens are packed pairs, see pack_pair)
    std::array<PostingRow, kBatchRows> rows;
    std::array<std::string, kBatchRows> df_terms;
    std::array<long long, kBatchRows> df_deltas{};

    soci::statement lock_user, coll_find, coll_insert, coll_update, note_find, note_links;
    soci::statement note_insert, note_update, text_insert, text_update, text_delete;
    soci::statement links_delete, link_insert, att_delete, att_insert;
    soci::statement coll_bump, user_bump, note_delete;
    soci::statement note_old_index, posting_insert, posting_delete, df_add, df_upsert_one, df_drop;
    soci::statement postings_insert_many, df_upsert_many;
};

using notesd::uuid_from_halves;  // util.hpp
using notesd::uuid_halves;

/// A term of a note with its number of occurrences in the title and in the body, and where.
struct TermCount {
    std::string term;
    long long title_tf = 0, body_tf = 0;
    std::string pos;  ///< encode_positions of its title and body positions
};

/// The distinct terms of two space-joined stored fields with their counts and positions,
/// sorted bytewise.
std::vector<TermCount> count_terms(const std::string& title_terms, const std::string& body_terms);

/// Two non-negative counts in one BIGINT column (postings.tfs, postings.lens): first * 2^32 +
/// second, each capped at 2^31 - 1 so the value stays a positive signed 64-bit integer.
inline long long pack_pair(long long first, long long second) {
    constexpr long long kCap = 0x7fffffffLL;
    return (std::min(first, kCap) << 32) | std::min(second, kCap);
}
inline long long pair_first(long long packed) { return packed >> 32; }
inline long long pair_second(long long packed) { return packed & 0xffffffffLL; }

/// A postings row (uid_hi, uid_lo, updated_us, tfs, lens, pos) as the ranker reads it.
inline TermPosting unpack_posting(long long hi, long long lo, long long updated, long long tfs,
                                  long long lens, std::string pos) {
    return TermPosting{hi, lo, updated, static_cast<int>(pair_first(tfs)),
                       static_cast<int>(pair_second(tfs)), static_cast<int>(pair_first(lens)),
                       static_cast<int>(pair_second(lens)), std::move(pos)};
}

/// A postings row's key within one user: the candidate order (term, updated_us, uuid).
struct PostingKey {
    std::string term;
    long long updated = 0, hi = 0, lo = 0;
    bool operator<(const PostingKey& o) const {
        if (int c = term.compare(o.term)) return c < 0;
        if (updated != o.updated) return updated < o.updated;
        return hi != o.hi ? hi < o.hi : lo < o.lo;
    }
};

/// Index changes of one write transaction, applied in key order so B-tree neighbours are
/// written together. Changes of one key (a note written twice in a batch) net out in order.
struct IndexDelta {
    struct Op {
        PostingKey key;
        bool add = false;  // else remove
        long long note_id = 0, created = 0, flags = 0, tfs = 0, lens = 0;
        std::string pos;
    };
    std::vector<Op> ops;                            // in the order made
    std::vector<std::pair<std::string, int>> df;    // (term, +1 or -1)
    long long notes = 0, collections = 0, title_tokens = 0, body_tokens = 0;

    void remove(PostingKey k) { ops.push_back(Op{std::move(k), false, 0, 0, 0, 0, 0, {}}); }
    void add(PostingKey k, long long note_id, long long created, long long flags, long long tfs,
             long long lens, std::string pos) {
        ops.push_back(Op{std::move(k), true, note_id, created, flags, tfs, lens, std::move(pos)});
    }
};

/// Maps a list row to the item list_notes returns (shared by notes_by_ids).
NoteItem to_note(const NoteRow& r, bool with_content);

/// Postings rows fetched per round by SearchStmts::read_postings.
constexpr std::size_t kPostingsBatch = 256;

/// Most notes one hit() statement reads: a whole page of search results (limit is at most 50)
/// or the whole snapshot window (100); longer lists take several statements.
constexpr std::size_t kHitsMax = 100;

struct SearchParams {
    long long u = 0, lim = 0, cmin = 0, cmax = 0, umin = 0, umax = 0, mask = 0, mask2 = 0;
    long long coll = 0, now = 0;
    std::string term, prefix, prefix_end, uuid;
    std::vector<long long> colls = std::vector<long long>(100, 0);  // the IN list, padded
    std::vector<std::string> uuids = std::vector<std::string>(kHitsMax);  // hit(), padded
    // postings_at on the servers: the notes' (time, high uuid half) pairs, padded
    std::vector<long long> at = std::vector<long long>(kPostingsAtMax, 0);
    std::vector<long long> at_hi = std::vector<long long>(kPostingsAtMax, 0);
};

/// Statements of the search methods, each prepared on first use.
struct SearchStmts {
    SearchStmts(soci::session& s_, const Dialect& d_) : s(s_), d(d_) {}
    soci::statement& corpus();
    soci::statement& df();
    soci::statement& prefix(bool bounded);
    /// by_collection: one collection (:coll) drives; otherwise postings, filtered by 0, 1 or
    /// (padded) 100 collections through note_collections. !filtered (only without
    /// collections): the time bounds and flags are not checked.
    soci::statement& postings(int collections, bool by_collection, bool filtered = true);
    /// The rows of :t at the (time, high half) pairs of p.at / p.at_hi (postings_at keeps those
    /// of the asked notes).
    soci::statement& postings_at();
    /// SQLite only (sqlite_direct.hpp), read into out without SOCI's per-row exchange: the
    /// rows of :t of `notes`, one whole-key seek each.
    void sqlite_postings_at(const std::vector<PostingNote>& notes, std::vector<TermPosting>& out);
    soci::statement& indexed();
    SqliteStmt& sqlite_indexed();  ///< SQLite only: indexed()'s SQL, :u and :uuid bound as 1 and 2
    soci::statement& hit(bool with_content);
    /// SQLite only: hit()'s columns of one note (:u and :uuid bound as 1 and 2).
    SqliteStmt& sqlite_hit(bool with_content);
    /// SQLite only: BEGIN (deferred) and COMMIT of a read transaction, prepared once (through
    /// SOCI each was parsed and prepared again on every request).
    SqliteStmt& sqlite_begin();
    SqliteStmt& sqlite_commit();
    /// SQLite only: snap.search_snapshots (dialect.cpp), ids as 16-byte blobs. Insert binds
    /// ?1 id_hi, ?2 id, ?3 user, ?4 fingerprint, ?5 created, ?6 expires, ?7 note ids; find
    /// ?1 id_hi, ?2 user, ?3 now; purge ?1 now, ?2 rows.
    SqliteStmt& sqlite_snapshot_insert();
    SqliteStmt& sqlite_snapshot_find();
    SqliteStmt& sqlite_snapshot_purge();
    /// The servers' snapshots table through SOCI.
    soci::statement& snapshot_insert();
    soci::statement& snapshot_find();
    soci::statement& snapshot_purge();
    /// Runs postings() or postings_at() and appends their rows, fetched kPostingsBatch at a
    /// time (SOCI's per-row exchange is most of a server backend's cost per row).
    void read_postings(soci::statement& st, std::vector<TermPosting>& out);

    soci::session& s;
    const Dialect& d;
    SearchParams p;
    long long o_notes = 0, o_tt = 0, o_bt = 0, o_df = 0, o_updated = 0;
    std::vector<long long> b_hi, b_lo, b_updated, b_tfs, b_lens;  // postings rows, in batches
    std::vector<std::string> b_pos;
    std::string o_term, o_uuid, o_title_terms, o_body_terms, o_plain;
    NoteRow nr;
    SnapshotRecord snap;
    std::string snap_ids;
    std::map<int, soci::statement> variants;
    const bool sqlite = is_sqlite_session(s);
    std::unique_ptr<SqliteStmt> scan_at;
    std::unique_ptr<SqliteStmt> hit_one[2];  // sqlite_hit without / with content
    std::unique_ptr<SqliteStmt> indexed_one;
    std::unique_ptr<SqliteStmt> begin_one, commit_one;
    std::unique_ptr<SqliteStmt> snap_insert, snap_find, snap_purge;
    /// SQLite only: the packed postings (schema 006), read by term_postings without collections
    /// and kept in step by the write path; nullptr on the server backends.
    PackedPostings* packed() {
        if (sqlite && !packed_) packed_ = std::make_unique<PackedPostings>(s);
        return packed_.get();
    }

private:
    std::unique_ptr<PackedPostings> packed_;
    template <class Build>
    soci::statement& lazy(int key, Build&& build) {
        auto it = variants.find(key);
        if (it != variants.end()) return it->second;
        return variants.emplace(key, build()).first->second;
    }
};

/// A NoteInput checked and canonicalised before its transaction starts.
struct NoteWrite {
    const NoteInput* in = nullptr;
    std::string id;                            // canonical uuid
    long long hi = 0, lo = 0;                  // uuid_halves(id)
    std::vector<TermCount> terms;              // distinct title and body terms, sorted
    std::vector<std::string> collections;      // canonical, de-duplicated, in input order
    std::vector<std::string> attachment_ids;   // canonical, parallel to in->attachments
    std::string collections_text, audio_text;  // the denormalised columns
    std::string hash;                          // over every stored field
};

}  // namespace detail

template <class F>
auto SociStore::guarded(const char* op, F&& f) -> decltype(f()) {
    try {
        if (lost_) {
            sql_.reconnect();
            setup_session();
            lost_ = false;
        }
        return f();
    } catch (const soci::soci_error& e) {
        // Never what(): SOCI appends the statement and its bound values to it.
        drop_statements();
        // A failed reconnect is still a lost connection, whatever error the client reports.
        const ErrorClass c = lost_ ? ErrorClass::ConnectionLost : dialect_->classify(e);
        const std::string detail = std::string(op) + " (" + dialect_->describe(e) + ")";
        if (c == ErrorClass::ConnectionLost) lost_ = true;
        if (c == ErrorClass::ConnectionLost || c == ErrorClass::Unavailable)
            throw StoreUnavailable("database busy or unavailable during " + detail);
        throw std::runtime_error("database error during " + detail);
    }
}

}  // namespace notesd
