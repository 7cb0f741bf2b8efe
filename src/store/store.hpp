// The storage interfaces in domain terms, split by role, so each consumer (and each test fake)
// sees only what it uses:
//  - NoteReader: counts and keyset pages of notes and collections (the list endpoints).
//  - TokenLookup: the principal of a bearer token (api/auth).
//  - SearchIndex (index/search_index.hpp): statistics, terms, postings and stored index fields
//    of the search (search/); SearchSnapshots (index/snapshots.hpp): a search's ranked ids.
//  - HitReader: the current list items of a page of search results.
//  - ReadViews / ReadScope: one consistent view over several reads (SQLite: a read transaction).
//  - SearchStore: the four above together, what the search endpoint uses.
//  - NoteWriter: batch upsert, delete and index upkeep (ingest: import, demo; notesctl; the
//    API's note delete).
//  - NoteEditor, NoteTrash (note_editor.hpp): one note by id and the API's note writes; the
//    trash (also import and export).
//  - CollectionEditor (collection_editor.hpp): one collection by id, its writes, note links.
//  - Admin: schema, users and tokens, and the consistency check (notesctl).
//  - Housekeeping: work a worker runs after a response instead of during a request.
// Store is all of them; SociStore (soci_store.hpp) implements it for every backend, and
// open_store makes one. The owner of a Store (api/app.cpp, notesctl) hands out the roles.
// Every read takes the user id and sees only that user's rows.
#pragma once
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/model.hpp"
#include "index/merge_policy.hpp"
#include "index/search_index.hpp"
#include "index/snapshots.hpp"
#include "store/collection_editor.hpp"
#include "store/fault.hpp"
#include "store/note_editor.hpp"

namespace notesd {

class NoteReader {
public:
    virtual ~NoteReader() = default;
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
};

class TokenLookup {
public:
    virtual ~TokenLookup() = default;
    /// The principal owning an unrevoked token with this SHA-256 hex hash.
    virtual std::optional<Principal> find_token(const std::string& token_hash) = 0;
};

class HitReader {
public:
    virtual ~HitReader() = default;
    /// Current list items (and plain text) of these notes of the user, in the order of `ids`;
    /// deleted notes are left out.
    virtual std::vector<SearchHit> notes_by_ids(long long user_id, const std::vector<std::string>& ids,
                                                bool with_content) = 0;
};

class ReadViews {
public:
    virtual ~ReadViews() = default;
    /// A read-only view shared by the reads that follow, until end_read (use ReadScope): they
    /// see one committed state of the database. SQLite runs them in one read transaction (and
    /// takes its shared lock once instead of per statement); the server backends in one
    /// read-only transaction at REPEATABLE READ. No write may happen in between.
    virtual void begin_read() {}
    virtual void end_read() noexcept {}
};

/// ReadViews::begin_read for one scope.
class ReadScope {
public:
    explicit ReadScope(ReadViews& v) : v_(v) { v_.begin_read(); }
    ~ReadScope() { v_.end_read(); }
    ReadScope(const ReadScope&) = delete;
    ReadScope& operator=(const ReadScope&) = delete;

private:
    ReadViews& v_;
};

/// What the search endpoint reads and writes.
class SearchStore : public SearchIndex, public SearchSnapshots, public HitReader, public ReadViews {};

/// What NoteWriter::compact_index did.
struct IndexCompaction {
    long long folded_notes = 0;     ///< notes whose postings rows went into a new segment
    long long merged_segments = 0;  ///< segments merged into one
    long long segments = 0;         ///< the user's segments afterwards
    long long steps = 0;            ///< merge policy steps run
    long long longest_write_us = 0; ///< the longest write transaction of a step
    const char* longest_write_op = "";  ///< which one (IndexStep::longest_write_op)
};

/// What one step of the merge policy (NoteWriter::run_index_step) did.
struct IndexStep {
    long long folded_notes = 0, merged_segments = 0;
    bool lost = false;                ///< a concurrent merge took an input; nothing changed
    long long write_transactions = 0;
    /// The longest of the step's write transactions, from holding the user's writer lock (or,
    /// for those that take none, the database's write transaction) to the return of its COMMIT,
    /// which ends every lock (the WAL sync that follows on SQLite holds none).
    long long longest_write_us = 0;
    const char* longest_write_op = "";  ///< which of them (fold_rows, merge_publish, ...)
    /// A fold of pending entries: the term changes it took (as MergePlan::fold_pending_postings
    /// counts them) and how long its publish held the user's lock (next_fold_budget).
    long long fold_postings = 0, fold_publish_us = 0;
};

/// Told around each write transaction of an index step (NoteWriter::run_index_step,
/// drop_interrupted_merges): the background merger computes at a low CPU priority and takes its
/// own back while a transaction may hold the lock that requests' writes wait for
/// (server/merger_priority.hpp).
class StepWriteListener {
public:
    virtual ~StepWriteListener() = default;
    virtual void before_write() = 0;  ///< before the transaction begins (and waits for its lock)
    virtual void after_write() = 0;   ///< once it has committed or rolled back
};

/// Notes checked and analysed for NoteWriter::write_prepared (a store keeps its analysis in a
/// subclass, which may point into `notes`: they are not changed once prepared, and the object
/// is moved behind its unique_ptr, never copied).
class PreparedNotes {
public:
    PreparedNotes() = default;
    PreparedNotes(const PreparedNotes&) = delete;
    PreparedNotes& operator=(const PreparedNotes&) = delete;
    virtual ~PreparedNotes() = default;
    std::vector<NoteInput> notes;
};

class NoteWriter {
public:
    virtual ~NoteWriter() = default;
    /// Inserts or updates (by user and uuid) in one transaction; keeps note_count consistent.
    /// An update of a note's content raises its version by one; a note in the trash keeps its
    /// id and stays there (Unchanged).
    virtual std::vector<WriteOutcome> write_batch(long long user_id,
                                                  const std::vector<CollectionInput>& collections,
                                                  const std::vector<NoteInput>& notes) = 0;
    /// write_batch in two halves. prepare_batch checks and analyses the notes (invalid_argument
    /// as write_batch would throw it): CPU only, touching neither the database nor the
    /// writer's state, so one thread may prepare a batch while another writes the one before
    /// (an import's pipeline, ingest/import.cpp). write_prepared then writes them.
    virtual std::unique_ptr<PreparedNotes> prepare_batch(std::vector<NoteInput> notes) const {
        auto out = std::make_unique<PreparedNotes>();
        out->notes = std::move(notes);
        return out;
    }
    virtual std::vector<WriteOutcome> write_prepared(long long user_id,
                                                     const std::vector<CollectionInput>& collections,
                                                     PreparedNotes& prepared) {
        return write_batch(user_id, collections, prepared.notes);
    }
    /// Deletes a live or trashed note with its links and index entries for good; false when
    /// the user has no such note.
    virtual bool delete_note(long long user_id, const std::string& note_id) = 0;
    /// Brings the user's read-optimised copy of the search index up to date after writes
    /// (SQLite: packs the postings rows written since into blocks, sqlite_packed.hpp); searches
    /// are right without it, only slower. Returns the blocks written; 0 where there is none.
    virtual long long pack_postings(long long /*user_id*/) { return 0; }
    /// Folds the user's postings rows (small writes) into a segment of the search index and
    /// merges the user's segments down to a few (store/segments.hpp); searches are right
    /// without it, only slower. One transaction, the user's writes wait for it.
    virtual IndexCompaction compact_index(long long /*user_id*/) { return {}; }
    /// The user's search index as the merge policy sees it (index/merge_policy.hpp).
    virtual IndexState index_state(long long /*user_id*/) { return {}; }
    /// Runs one step the merge policy planned; no write transaction of it holds the user's
    /// writer lock for more than a bounded amount of work (store/segments.hpp).
    virtual IndexStep run_index_step(long long /*user_id*/, const MergePlan& /*plan*/) { return {}; }
    /// Removes what merges interrupted by a crash left (hidden segments); returns how many.
    /// A merge of the user running concurrently elsewhere then loses its step.
    virtual long long drop_interrupted_merges(long long /*user_id*/) { return 0; }
    /// Tells `l` (or no one: null) about each write transaction of the index steps from now on.
    virtual void listen_to_step_writes(StepWriteListener* /*l*/) {}
};

class Admin {
public:
    virtual ~Admin() = default;
    virtual void migrate() = 0;
    virtual int schema_version() = 0;
    virtual long long add_user(const std::string& name, long long now_us) = 0;
    virtual std::optional<UserInfo> find_user(const std::string& name_or_id) = 0;
    virtual std::vector<UserInfo> list_users() = 0;
    virtual long long add_token(long long user_id, const std::string& token_hash,
                                const std::string& prefix, const std::string& label,
                                long long now_us, TokenScope scope) = 0;
    virtual std::vector<TokenInfo> list_tokens(long long user_id) = 0;
    /// false when no such token exists
    virtual bool revoke_token(long long token_id, long long now_us) = 0;
    /// Compares the user's maintained counts (users, collections.note_count) with a recount and
    /// the search index (postings, term_df, token sums, and a strategy's read-optimised copy)
    /// with a rebuild from the stored terms, under the user's writer lock; one line per
    /// difference, none when consistent. Writes nothing.
    virtual std::vector<std::string> check_user(long long user_id) = 0;
};

class Housekeeping {
public:
    virtual ~Housekeeping() = default;
    /// For a process that calls housekeeping() between requests (a notesd worker): work that
    /// need not delay a response is left for it (SQLite: WAL checkpoints). Others never call it.
    virtual void defer_housekeeping() {}
    /// That deferred work, after a response is sent; never throws.
    virtual void housekeeping() noexcept {}
};

/// Every role of one database connection.
class Store : public NoteReader,
              public TokenLookup,
              public SearchStore,
              public NoteWriter,
              public NoteEditor,
              public NoteTrash,
              public CollectionEditor,
              public Admin,
              public Housekeeping {};

/// Opens a store from a SOCI connection string ("sqlite3://db=/path", "mysql://...",
/// "postgresql://..."). A database that cannot be reached or opened is a StoreUnavailable;
/// a malformed connection string std::invalid_argument.
std::unique_ptr<Store> open_store(const std::string& connection_string);
/// open_store for bulk writes (notesctl): an SQLite database gets a 128 MiB page cache unless
/// the connection string sets `cache_mb=`: enough for the B-trees an import writes into, while
/// a larger cache only cost the page faults of filling it (doc/benchmarks.md, "notesctl's page
/// cache and heap"), and synchronous=FULL unless it sets `synchronous=`, so every commit it reports is durable.
std::unique_ptr<Store> open_store_for_bulk(const std::string& connection_string);
/// open_store for a worker: an SQLite database gets a 256 MiB page cache unless the connection
/// string sets `cache_mb=`. busy_timeout_ms is the busy timeout (SQLite) or lock wait (servers)
/// and overrides a `timeout=` in the connection string; connect_timeout_s > 0 (servers only)
/// overrides a `connect_timeout=` in it.
std::unique_ptr<Store> open_store(const std::string& connection_string, int busy_timeout_ms,
                                  int connect_timeout_s = 0);

}  // namespace notesd
