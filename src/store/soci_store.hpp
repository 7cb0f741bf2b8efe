// The one SOCI implementation of Store for every backend: SQL differences come from Dialect,
// how the search index is stored and read from its IndexStrategy (index_strategy.hpp), both
// chosen when the store opens.
#pragma once
#include <soci/soci.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "store/dialect.hpp"
#include "store/index_strategy.hpp"
#include "store/migrations.hpp"
#include "store/pending_notes.hpp"
#include "store/segments.hpp"
#include "store/soci_stmt.hpp"
#include "store/sqlite_direct.hpp"
#include "store/store.hpp"

namespace notesd {


namespace detail {
struct ReadStatements;
struct WriteStatements;
struct NoteWrite;
struct StoredTerms;
struct NoteStatements;
struct NoteState;
struct CollectionStatements;
class TimeCounts;
}  // namespace detail

class SociStore final : public Store {
public:
    /// Connects and runs the dialect's session setup; throws StoreUnavailable or runtime_error.
    explicit SociStore(DbTarget target);
    ~SociStore() override;
    SociStore(const SociStore&) = delete;
    SociStore& operator=(const SociStore&) = delete;

    std::optional<Principal> find_token(const std::string& token_hash) override;
    long long count_notes(long long user_id, const NoteFilter& f) override;
    std::vector<NoteItem> list_notes(long long user_id, const NoteFilter& f, OrderBy order,
                                     const std::optional<PageKey>& after, int limit,
                                     bool with_content) override;
    long long count_collections(long long user_id, const CollectionFilter& f) override;
    std::vector<CollectionItem> list_collections(long long user_id, const CollectionFilter& f,
                                                 OrderBy order,
                                                 const std::optional<PageKey>& after,
                                                 int limit) override;

    SearchCorpus search_corpus(long long user_id) override;
    std::vector<long long> term_dfs(long long user_id,
                                    const std::vector<std::string>& terms) override;
    std::vector<std::pair<std::string, long long>> prefix_terms(long long user_id,
                                                                const std::string& prefix,
                                                                int limit) override;
    using SearchIndex::term_postings;
    std::vector<TermPosting> term_postings(long long user_id, const std::string& term,
                                           const SearchFilter& f, int limit,
                                           bool with_positions) override;
    std::vector<TermPosting> postings_at(long long user_id, const std::string& term,
                                         const std::vector<PostingNote>& notes) override;
    std::vector<IndexedNote> indexed_notes(long long user_id,
                                           const std::vector<std::string>& ids) override;
    std::vector<SearchHit> notes_by_ids(long long user_id, const std::vector<std::string>& ids,
                                        bool with_content) override;
    void save_snapshot(const SnapshotRecord& s) override;
    std::optional<SnapshotRecord> find_snapshot(long long user_id, const std::string& id,
                                                long long now_us) override;
    int purge_snapshots(long long now_us, int max_rows) override;
    void begin_read() override;
    void end_read() noexcept override;
    void defer_housekeeping() override;
    void housekeeping() noexcept override;

    void migrate() override;
    int schema_version() override;
    long long add_user(const std::string& name, long long now_us) override;
    std::optional<UserInfo> find_user(const std::string& name_or_id) override;
    std::vector<UserInfo> list_users() override;
    long long add_token(long long user_id, const std::string& token_hash,
                        const std::string& prefix, const std::string& label,
                        long long now_us, TokenScope scope) override;
    std::vector<TokenInfo> list_tokens(long long user_id) override;
    bool revoke_token(long long token_id, long long now_us) override;
    std::vector<std::string> check_user(long long user_id) override;  // soci_check.cpp
    std::vector<WriteOutcome> write_batch(long long user_id,
                                          const std::vector<CollectionInput>& collections,
                                          const std::vector<NoteInput>& notes) override;
    std::unique_ptr<PreparedNotes> prepare_batch(std::vector<NoteInput> notes) const override;
    std::vector<WriteOutcome> write_prepared(long long user_id,
                                             const std::vector<CollectionInput>& collections,
                                             PreparedNotes& prepared) override;
    long long pack_postings(long long user_id) override;
    // the merge policy's steps (soci_compact.cpp)
    IndexCompaction compact_index(long long user_id) override;
    IndexState index_state(long long user_id) override;
    IndexStep run_index_step(long long user_id, const MergePlan& plan) override;
    long long drop_interrupted_merges(long long user_id) override;

    // NoteEditor, NoteTrash and the note delete (soci_notes.cpp)
    std::optional<NoteRecord> find_note(long long user_id, const std::string& note_id) override;
    std::vector<std::pair<std::string, std::string>> collection_titles(long long user_id) override;
    NoteWriteResult create_note(long long user_id, const NoteInput& n) override;
    NoteWriteResult update_note(long long user_id, const NoteInput& n,
                                long long expected_version) override;
    NoteWriteResult set_note_created(long long user_id, const std::string& note_id,
                                     long long created_us) override;
    bool trash_note(long long user_id, const std::string& note_id, long long now_us) override;
    bool restore_note(long long user_id, const std::string& note_id) override;
    std::vector<std::string> trashed_note_ids(long long user_id) override;
    bool delete_note(long long user_id, const std::string& note_id) override;

    // CollectionEditor (soci_collections.cpp)
    std::optional<CollectionItem> find_collection(long long user_id,
                                                  const std::string& collection_id) override;
    CollectionWrite create_collection(long long user_id, const CollectionInput& c) override;
    CollectionWrite update_collection(long long user_id, const std::string& collection_id,
                                      const CollectionPatch& p, CollectionItem* out) override;
    CollectionWrite delete_collection(long long user_id, const std::string& collection_id) override;
    CollectionWrite link_note(long long user_id, const std::string& collection_id,
                              const std::string& note_id) override;
    CollectionWrite unlink_note(long long user_id, const std::string& collection_id,
                                const std::string& note_id) override;
    CollectionWrite move_note(long long user_id, const std::string& source,
                              const std::string& note_id, const std::string& target) override;

    /// The busy timeout (SQLite) or lock wait (servers) this session was set up with.
    int busy_timeout_ms() const { return target_.busy_timeout_ms; }
    const Dialect& dialect() const { return *dialect_; }
    /// A test seam: f runs in a fold step after its segment is written hidden, before the
    /// publish (t/unit/store/store_pending_tests.cpp writes the user's notes meanwhile).
    void on_fold_written(std::function<void()> f) { on_fold_written_ = std::move(f); }
    /// The same seam for a merge step: f runs once its merged segment is written hidden, before
    /// the publish (t/e2e/test_merger.py kills the merger there).
    void on_merge_written(std::function<void()> f) { on_merge_written_ = std::move(f); }
    void listen_to_step_writes(StepWriteListener* l) override { step_listener_ = l; }

    /// WAL growth at which housekeeping checkpoints, in frames (SQLite's own automatic
    /// threshold): a commit's page look-ups walk the WAL's index by frame, and the pages a
    /// checkpoint copies are few distinct ones written over and over (counts, the indexes'
    /// right edges), whatever their size.
    static constexpr int kCheckpointPages = 1000;
    /// The page size of a new SQLite file. A note row (about 2 KB of content) leaves a quarter
    /// of a 4 KiB page unused; 16 KiB pages pack it, and the search index's blocks, closer:
    /// the benchmark's 200,010 notes take 851 MB instead of 965 MB (doc/benchmarks.md). The
    /// size is fixed when a file's first page is written (doc/upgrading.md to change it).
    static constexpr int kNewFilePageBytes = 16384;

private:
    /// Whether guarded may run a call once more after its connection turned out lost.
    enum class Replay { never, reads };
    // Runs f on a ready session (reconnected first when a fault left it unusable). A SOCI error
    // becomes StoreUnavailable (an environmental fault, Dialect::fault_of) or a runtime_error
    // with a safe message. A read (Replay::reads) whose connection was found dead, say ended by
    // a server restart or an idle timeout since the last request, runs once more on a new
    // connection; a write is never replayed (it may have committed).
    template <class F>
    auto guarded(const char* op, F&& f, Replay replay = Replay::never) -> decltype(f());
    /// guarded for a call that only reads, which may be replayed.
    template <class F>
    auto reading(const char* op, F&& f) -> decltype(f()) {
        return guarded(op, std::forward<F>(f), Replay::reads);
    }
    /// After f failed with e: forgets the statements and notes whether the connection must be
    /// opened afresh; returns true when f may run once more (may_replay), else throws.
    bool recover(const char* op, const soci::soci_error& e, bool may_replay);
    void reconnect();
    /// guarded f in one write transaction with the user's writer lock held, committed when f
    /// returns (whatever f decided, it is that state: an outcome without a write commits none).
    template <class F>
    auto locked_write(const char* op, long long user_id, F&& f) -> decltype(f());
    void connect();
    /// What a write transaction runs after its COMMIT: SQLite's WAL sync (sync_after_commit).
    std::function<void()> after_commit();
    /// The dialect's session statements and, on SQLite, the connection's tuning (after every
    /// connect and reconnect).
    void setup_session();
    void drop_statements();
    detail::ReadStatements& reads();
    detail::WriteStatements& writes();
    detail::NoteStatements& note_statements();
    detail::CollectionStatements& collection_statements();
    /// note_time_counts: the filtered lists' totals, kept by every note write (time_counts.hpp).
    detail::TimeCounts& time_counts();
    /// The id (and note_count) of the user's collection with this uuid; 0 when unknown.
    long long collection_row_id(long long user_id, const std::string& uuid, long long* note_count);
    /// The canonical ids among `uuids` of collections the user has, de-duplicated, in order.
    std::vector<std::string> existing_collections(long long user_id,
                                                  const std::vector<std::string>& uuids);
    /// The user's live / trashed note, its links limited to the collections that exist.
    std::optional<detail::NoteState> live_note(long long user_id, const std::string& uuid);
    std::optional<detail::NoteState> trashed_note(long long user_id, const std::string& uuid);
    bool is_trashed(long long user_id, const std::string& uuid);
    /// One note through write_batch's path (version: as NoteWrite::version), the user locked
    /// by the caller. `analysed`: detail::analyse_note of the note, and `before`: stored_terms
    /// of the note it replaces, both done before the lock.
    WriteOutcome write_note_locked(long long user_id, const NoteInput& n,
                                   std::optional<long long> version,
                                   std::optional<detail::AnalysedNote> analysed = std::nullopt,
                                   const detail::StoredTerms* before = nullptr);
    /// Deletes a live note with everything derived from it; false when there is none.
    /// `before`: as write_note_locked's.
    bool remove_note_locked(long long user_id, const std::string& uuid,
                            const detail::StoredTerms* before = nullptr);
    /// The terms of the user's live note as stored, counted outside any transaction so that an
    /// update or delete need not count them under the write lock; none when the note is not
    /// live or its index entry is pending (whose removal needs no counting).
    std::optional<detail::StoredTerms> stored_terms(long long user_id, const std::string& uuid);
    bool table_exists(const std::string& name);
    bool apply_migration(const EmbeddedMigration& m);
    /// Data steps a migration's SQL cannot do, run in its transaction right after the script.
    void after_migration(int version);
    /// Writes up to max_notes of the user's notes whose postings are rows into a new segment
    /// and drops their rows, in the caller's transaction, adding no note once max_postings are
    /// in; returns the notes written.
    long long fold_rows(long long user_id, long long max_notes, long long max_postings);
    /// A merge policy step's write: f in a write transaction of its own, with the user's writer
    /// lock when lock_user_id is not 0; its time from lock to commit goes into step.
    template <class F>
    long long step_write(const char* op, long long lock_user_id, IndexStep& step, F&& f);
    void merge_step(long long user_id, const std::vector<long long>& ids, IndexStep& step);
    /// The user's pending entries, as a term read merges them (soci_search.cpp).
    detail::PendingList pending_of(long long user_id);
    /// The op names of write_hidden_segment's transactions.
    struct HiddenWriteOps {
        const char *begin, *blocks, *notes;
    };
    /// A new segment of the user written hidden (unpublished) in short transactions: its row,
    /// the blocks `produce(emit)` emits (blocks_per_write or kBytesPerWrite a transaction), and
    /// the notes table it returns, which comes back decoded; segment_id is set at the start.
    template <class Produce>
    std::shared_ptr<SegmentNotes> write_hidden_segment(long long user_id, const HiddenWriteOps& ops,
                                                       std::size_t blocks_per_write, IndexStep& step,
                                                       long long& segment_id, Produce&& produce);
    /// Deletes dropping segments (blocks, then rows) in short transactions.
    void drop_segments(const std::vector<long long>& segment_ids, IndexStep& step);
    /// Refills the postings table from notes and note_text (the terms' counts need C++).
    void rebuild_postings();
    /// Schema 019: stored plain texts as edits of their content (plain_text_codec.hpp).
    void encode_stored_plain_texts();
    void lock_user(long long user_id);
    /// write_batch's transaction, the collections checked and the notes prepared.
    std::vector<WriteOutcome> write_notes(long long user_id,
                                          const std::vector<CollectionInput>& colls,
                                          const std::vector<detail::NoteWrite>& prepared,
                                          detail::PrebuiltSegment* prebuilt = nullptr);
    long long run_insert(soci::statement& st, const char* table, long long& id);
    void upsert_collection(const CollectionInput& c, std::map<std::string, long long>& ids,
                           detail::IndexDelta& delta);
    WriteOutcome upsert_note(const detail::NoteWrite& n, std::map<std::string, long long>& ids,
                             detail::IndexDelta& delta);
    void relink_note(const detail::NoteWrite& n, long long note_id, bool existed,
                     const std::map<std::string, long long>& ids);
    /// Records the postings, document-frequency and token-sum changes of writing n (nullptr:
    /// deleting the note) over its stored index (when existed).
    void reindex_note(const detail::NoteWrite* n, long long note_id, bool existed,
                      const std::string& uuid, detail::IndexDelta& delta,
                      const detail::StoredTerms* before = nullptr);
    /// reindex_note of an API write: the note's pending row (old_terms: what term_df counts for
    /// it; rows_updated_us: its old postings rows to remove, at that key).
    void queue_pending(const detail::NoteWrite* n, long long note_id, long long hi, long long lo,
                       const std::vector<detail::TermCount>& old_terms,
                       std::optional<long long> rows_updated_us, detail::IndexDelta& delta);
    /// Folds the user's oldest pending entries into a segment and term_df in steps of its own
    /// transactions (soci_compact.cpp); returns how many.
    long long fold_pending(long long user_id, long long max_notes, long long max_postings,
                           IndexStep& step);
    /// Writes the netted changes (postings, term_df, users' counts) and clears them.
    void apply_index(long long user_id, detail::IndexDelta& delta);
    void apply_df(std::vector<std::pair<std::string, int>>& changes);

    DbTarget target_;
    /// Whether the last batch written was all new notes: prepare_batch (another thread, an
    /// import's pipeline) prebuilds the next batch's segment only then.
    std::atomic<bool> last_batch_new_{true};
    std::unique_ptr<Dialect> dialect_;
    std::function<void()> on_fold_written_;
    std::function<void()> on_merge_written_;
    StepWriteListener* step_listener_ = nullptr;
    soci::session sql_;
    bool lost_ = false;
    bool reading_ = false;  // inside begin_read (SQLite)
    detail::SqliteTuning lite_;  // SQLite: lock waits and checkpoints (sqlite_direct.hpp)
    std::unique_ptr<detail::ReadStatements> reads_;
    std::unique_ptr<detail::WriteStatements> writes_;
    std::unique_ptr<detail::NoteStatements> notes_;
    std::unique_ptr<detail::CollectionStatements> collections_;
    std::unique_ptr<detail::TimeCounts> time_counts_;
    detail::Segments segments_;  // before index_, which reads through it
    detail::PendingNotes pending_;
    std::unique_ptr<detail::IndexStrategy> index_;
};

template <class F>
auto SociStore::guarded(const char* op, F&& f, Replay replay) -> decltype(f()) {
    for (bool replayed = false;; replayed = true) {
        try {
            if (lost_) reconnect();
            return f();
        } catch (const soci::soci_error& e) {
            recover(op, e, replay == Replay::reads && !replayed);
        }
    }
}

template <class F>
auto SociStore::locked_write(const char* op, long long user_id, F&& f) -> decltype(f()) {
    return guarded(op, [&] {
        detail::WriteTxn tx(sql_, dialect_->begin_write(), after_commit());
        lock_user(user_id);
        auto out = f();
        tx.commit();
        return out;
    });
}

}  // namespace notesd
