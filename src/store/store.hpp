// The storage interface in domain terms. Handlers and the admin tool see only this.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/model.hpp"

namespace notesd {

/// Most notes one Store::postings_at call takes.
constexpr std::size_t kPostingsAtMax = 32;

class Store {
public:
    virtual ~Store() = default;

    // --- request path (every read is scoped to user_id) ---
    /// The principal owning an unrevoked token with this SHA-256 hex hash.
    virtual std::optional<Principal> find_token(const std::string& token_hash) = 0;
    virtual long long count_notes(long long user_id, const NoteFilter& f) = 0;
    /// Up to `limit` notes after `after`, ordered by (order_by value, id) descending.
    virtual std::vector<NoteItem> list_notes(long long user_id, const NoteFilter& f, OrderBy order,
                                             const std::optional<PageKey>& after, int limit,
                                             bool with_content) = 0;
    virtual long long count_collections(long long user_id, const CollectionFilter& f) = 0;
    virtual std::vector<CollectionItem> list_collections(long long user_id,
                                                         const CollectionFilter& f, OrderBy order,
                                                         const std::optional<PageKey>& after,
                                                         int limit) = 0;

    // --- search (contract section 5); terms are the output of text.hpp's analysis ---
    virtual SearchCorpus search_corpus(long long user_id) = 0;
    /// Document frequency among the user's notes of each term (same order; 0 when absent).
    virtual std::vector<long long> term_dfs(long long user_id, const std::vector<std::string>& terms) = 0;
    /// Stored terms of the user starting with `prefix` (bytewise), by df desc then term asc.
    virtual std::vector<std::pair<std::string, long long>> prefix_terms(long long user_id,
                                                                        const std::string& prefix,
                                                                        int limit) = 0;
    /// Notes of the user containing `term` (title or body) and matching `f`, most recently
    /// updated first (updated_us desc, id desc), at most `limit`. Without with_positions the
    /// positions may be left empty (for a query that scores no phrase or proximity).
    virtual std::vector<TermPosting> term_postings(long long user_id, const std::string& term,
                                                   const SearchFilter& f, int limit,
                                                   bool with_positions) = 0;
    std::vector<TermPosting> term_postings(long long user_id, const std::string& term,
                                           const SearchFilter& f, int limit) {
        return term_postings(user_id, term, f, limit, true);
    }
    /// Postings of `term` of these notes of the user (at most kPostingsAtMax), looked up by
    /// their full key, any order. A note without the term has no row; so has a listed key that
    /// is no longer a note's (it was updated or deleted since).
    virtual std::vector<TermPosting> postings_at(long long user_id, const std::string& term,
                                                 const std::vector<PostingNote>& notes) = 0;
    /// The index fields of these notes of the user (any order; unknown ids are left out).
    virtual std::vector<IndexedNote> indexed_notes(long long user_id,
                                                   const std::vector<std::string>& ids) = 0;
    /// Current list items (and plain text) of these notes of the user, in the order of `ids`;
    /// deleted notes are left out.
    virtual std::vector<SearchHit> notes_by_ids(long long user_id, const std::vector<std::string>& ids,
                                                bool with_content) = 0;
    virtual void save_snapshot(const SnapshotRecord& s) = 0;
    /// The user's unexpired snapshot with this id, or nullopt (unknown, expired and foreign alike).
    virtual std::optional<SnapshotRecord> find_snapshot(long long user_id, const std::string& id,
                                                        long long now_us) = 0;
    /// Deletes at most `max_rows` expired snapshots; returns how many.
    virtual int purge_snapshots(long long now_us, int max_rows) = 0;

    /// A read-only view shared by the reads that follow, until end_read (use ReadScope): SQLite
    /// runs them in one read transaction, so they see one state of the database and take its
    /// shared lock once instead of per statement; the server backends do nothing. No write may
    /// happen in between.
    virtual void begin_read() {}
    virtual void end_read() noexcept {}

    /// For a process that calls housekeeping() between requests (a notesd worker): work that
    /// need not delay a response is left for it (SQLite: WAL checkpoints). Others never call it.
    virtual void defer_housekeeping() {}
    /// That deferred work, after a response is sent; never throws.
    virtual void housekeeping() noexcept {}

    // --- administration (notesctl) ---
    virtual void migrate() = 0;
    virtual int schema_version() = 0;
    virtual long long add_user(const std::string& name, long long now_us) = 0;
    virtual std::optional<UserInfo> find_user(const std::string& name_or_id) = 0;
    virtual std::vector<UserInfo> list_users() = 0;
    virtual long long add_token(long long user_id, const std::string& token_hash,
                                const std::string& prefix, const std::string& label,
                                long long now_us) = 0;
    virtual std::vector<TokenInfo> list_tokens(long long user_id) = 0;
    /// false when no such token exists
    virtual bool revoke_token(long long token_id, long long now_us) = 0;
    /// Inserts or updates (by user and uuid) in one transaction; keeps note_count consistent.
    virtual std::vector<WriteOutcome> write_batch(long long user_id,
                                                  const std::vector<CollectionInput>& collections,
                                                  const std::vector<NoteInput>& notes) = 0;
    /// false when the user has no such note
    virtual bool delete_note(long long user_id, const std::string& note_id) = 0;
    /// Brings the user's read-optimised copy of the search index up to date after writes
    /// (SQLite: packs the postings rows written since into blocks, sqlite_packed.hpp); searches
    /// are right without it, only slower. Returns the blocks written; 0 where there is none.
    virtual long long pack_postings(long long /*user_id*/) { return 0; }
};

/// Store::begin_read for one scope.
class ReadScope {
public:
    explicit ReadScope(Store& s) : s_(s) { s_.begin_read(); }
    ~ReadScope() { s_.end_read(); }
    ReadScope(const ReadScope&) = delete;
    ReadScope& operator=(const ReadScope&) = delete;

private:
    Store& s_;
};

/// Opens a store from a SOCI connection string ("sqlite3://db=/path", "mysql://...",
/// "postgresql://..."). Throws std::runtime_error with a readable message on failure.
std::unique_ptr<Store> open_store(const std::string& connection_string);
/// open_store for bulk writes (notesctl): an SQLite database gets a 512 MiB page cache unless
/// the connection string sets `cache_mb=`, so a large import does not thrash the index B-trees.
std::unique_ptr<Store> open_store_for_bulk(const std::string& connection_string);
/// open_store for a worker: an SQLite database gets a 256 MiB page cache unless the connection
/// string sets `cache_mb=`. busy_timeout_ms is the busy timeout (SQLite) or lock wait (servers)
/// and overrides a `timeout=` in the connection string; connect_timeout_s > 0 (servers only)
/// overrides a `connect_timeout=` in it.
std::unique_ptr<Store> open_store(const std::string& connection_string, int busy_timeout_ms,
                                  int connect_timeout_s = 0);

}  // namespace notesd
