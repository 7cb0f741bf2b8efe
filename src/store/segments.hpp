// Index segments in the database (schema 010; the format is index/segment.hpp): the same
// tables, SQL and decoder on every backend, blobs exchanged through SOCI as the dialect says.
//
// A note's postings are either rows of the postings table (API writes not folded yet, data from
// before schema 010) or in exactly one segment where the note is live; SociStore writes each
// batch of notesctl import as a segment, marks a segment's note dead when the note is updated,
// trashed or deleted, and folds rows into segments and merges segments (compact). RowIndex reads
// both sides and merges them in candidate order.
//
// Reads decode a segment's notes table once per process: a segment's notes never change (only
// its live set does) and its id is never reused (AUTOINCREMENT, AUTO_INCREMENT, a sequence).
#pragma once
#include <soci/soci.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/model.hpp"
#include "index/segment.hpp"
#include "index/segment_pack.hpp"
#include "store/dialect.hpp"
#include "store/segment_block_reader.hpp"
#include "store/segment_block_writer.hpp"
#include "store/term_block_cache.hpp"

namespace notesd::detail {

/// A write_batch of at least this many notes writes them as a segment; fewer go to postings
/// rows, which compact folds into a segment later.
constexpr std::size_t kSegmentMinNotes = 64;
/// compact leaves a user at most this many segments.
constexpr std::size_t kMaxSegments = 4;

/// The bytes of term blocks a process keeps (term_block_cache.hpp): the blocks of the terms
/// its searches read most, at 100,000 notes a user tens of megabytes for the frequent ones.
constexpr std::size_t kTermBlockCacheBytes = std::size_t{64} << 20;

/// One segment of a user as a read or a write sees it.
struct SegmentRef {
    long long id = 0;
    std::shared_ptr<const SegmentNotes> notes;
    LiveDocs live;
    long long stored_live_count = 0;  ///< index_segments.live_count (notesctl check compares)
    /// Its blocks when they are stored as one pack (segment_pack.hpp); null: a row per block.
    std::shared_ptr<const SegmentPack> pack;
};

/// Keeps a posting of a segment note (a collection filter); null: every note.
using NoteKeep = std::function<bool(const SegmentNote&)>;


/// A term's postings rows and segment postings (each in candidate order) in candidate order,
/// at most `limit` (also when one side is empty). Without a snapshot (the servers) a fold or merge committing between the
/// two reads may show a note on both sides: its newest posting counts, once.
std::vector<TermPosting> merge_rows_and_segments(std::vector<TermPosting> rows,
                                                 std::vector<TermPosting> seg, long long limit);

class Segments {
public:
    Segments(soci::session& s, const Dialect& d, std::unique_ptr<SegmentBlockReader> blocks);
    ~Segments();
    Segments(const Segments&) = delete;
    Segments& operator=(const Segments&) = delete;

    /// Forgets the prepared statements (SociStore's error and migration paths).
    void drop_statements();

    // ---- reads ----
    /// The user's segments, oldest first, with their current live sets (within a view: as
    /// the view's first listing found them).
    std::vector<SegmentRef> of_user(long long user_id);
    /// A read view begins or ends: listings are kept until it ends. In SQLite's read
    /// transaction they stay true; on the servers a segment committed since (a fold or a
    /// merge) shows in a term's blocks, and term_postings then lists again.
    /// snapshot: the view's reads see one state of the database (SQLite's read transaction).
    void begin_view(bool snapshot) {
        in_view_ = true;
        snapshot_ = snapshot;
    }
    void end_view() {
        in_view_ = false;
        view_.clear();
        view_rows_.clear();
        view_heads_.clear();
    }
    bool in_view() const { return in_view_; }
    /// What a search reads of a user once per view besides the segments.
    struct ViewHead {
        SearchCorpus corpus;       ///< the users row's counts (all zero: no such user)
        bool has_pending = false;  ///< whether index_pending has entries of the user
    };
    /// Within a view, the user's head, read with the view's first listing of the user by one
    /// statement (the listing, the corpus, whether the user has postings rows and pending
    /// entries: four round trips on the servers otherwise); null outside a view.
    const ViewHead* view_head(long long user_id);
    /// Within a view, whether the user has postings rows as the view's head or RowIndex first
    /// found them (unset until one looks), forgotten with the view and whenever the listing is
    /// renewed; null outside a view.
    std::optional<bool>* view_has_rows(long long user_id) {
        return in_view_ ? &view_rows_[user_id] : nullptr;
    }
    /// Appends the user's segment postings of `term` passing `f`'s time and flag filters (and
    /// `keep`), in candidate order, at most `limit`.
    void term_postings(long long user_id, const std::string& term, const SearchFilter& f,
                       long long limit, bool with_positions, const NoteKeep& keep,
                       std::vector<TermPosting>& out);
    /// Appends the segment postings of `term` of these notes (live ones only), any order;
    /// returns the notes live in no segment (whose postings, if any, are rows).
    std::vector<PostingNote> postings_at(long long user_id, const std::string& term,
                                         const std::vector<PostingNote>& notes,
                                         std::vector<TermPosting>& out);
    /// Every live posting of the user's segments, by term (notesctl check); problems found in
    /// the segments themselves go to `problems`.
    void each_posting(long long user_id,
                      const std::function<void(const std::string& term, const SegmentNote&,
                                               const SegmentPosting&)>& fn,
                      std::vector<std::string>& problems);

    // ---- writes: in the caller's write transaction, the user locked ----
    /// A new write transaction of `user_id` starts: what an earlier one loaded is forgotten.
    void begin_write(long long user_id);
    /// Whether the note is live in one of the user's segments.
    bool is_live(long long user_id, long long updated_us, long long uid_hi, long long uid_lo);
    /// Marks the note dead in the segment where it is live; false when it is in none.
    bool remove_note(long long user_id, long long updated_us, long long uid_hi, long long uid_lo);
    /// Writes the builder's notes as a new segment (none when empty) and the live sets that
    /// remove_note changed. The builder is empty afterwards.
    void flush(long long user_id, SegmentBuilder& builder);

    // ---- merges in steps (segment_merge.cpp), each write a short transaction of the caller ----
    // A merge reads its inputs outside any write transaction (their notes and blocks never
    // change), writes the merged blocks and notes table under an unpublished segment row
    // (note_count 0, live_count 0: no listing shows it), then `publish` makes it visible and
    // retires the inputs in one short transaction with the user locked, carrying over the notes
    // marked dead in the inputs meanwhile (a fold of pending entries is written the same way). Retired segments (note_count 0, live_count -1: dropping) lose
    // their blocks in short transactions, then their row. A merge killed at any point leaves
    // only hidden segments, which drop_interrupted removes.
    /// Inserts an unpublished segment row of the user; returns its id.
    long long insert_unpublished(long long user_id);
    /// Writes these blocks of an unpublished segment (the vector is emptied).
    void insert_blocks(long long user_id, long long segment_id, std::vector<SegmentBlock>& blocks);
    /// Writes all the blocks of an unpublished segment as one pack (segment_pack.hpp).
    void insert_pack(long long user_id, long long segment_id, const std::vector<SegmentBlock>& blocks);
    /// The merge's inputs as it listed them.
    SegmentInput input_of(const SegmentRef& s);
    /// Writes the notes table of an unpublished segment (before its publish, which then holds
    /// the user's lock for the live sets only: a merged table is megabytes at 100,000 notes).
    void write_unpublished_notes(long long segment_id, const std::string& table);
    enum class Publish { lost, published, emptied };
    /// With the user locked: `segment_id` (unpublished, its notes table written and decoded
    /// as `notes`, merged from `inputs` as listed, or folded from pending entries with no
    /// inputs) replaces the inputs, with the notes `dead` (by key) dead in it; emptied when no
    /// note stayed live (the segment then drops like the inputs); lost, changing nothing, when
    /// an input or the unpublished row is gone (another merge, or drop_interrupted, ran).
    Publish publish(long long user_id, long long segment_id, const std::vector<SegmentRef>& inputs,
                    std::shared_ptr<const SegmentNotes> notes, const std::vector<SegmentNote>& dead = {});
    /// Marks the user's hidden segments (unpublished or dropping) dropping; returns their ids.
    std::vector<long long> mark_hidden_dropping(long long user_id);
    /// Marks one unpublished segment dropping.
    void mark_dropping(long long segment_id);
    /// Term bounds cutting a dropping segment's blocks, in term order, into runs of about `n`
    /// blocks or `bytes` bytes (read outside a write transaction). Since schema 016 a segment's
    /// blocks are one range of the table and of its index, so each run is a contiguous delete.
    std::vector<std::string> block_cuts(long long segment_id, std::size_t n, std::size_t bytes);
    /// Deletes the dropping segment's blocks with from <= term < to (to empty: to the end).
    void delete_blocks(long long segment_id, const std::string& from, const std::string& to);
    /// Deletes what is left of a dropping segment, blocks and row.
    void delete_dropped(long long segment_id);

private:
    struct Statements;
    struct WriteState {
        long long user_id = 0;
        bool loaded = false;
        std::vector<SegmentRef> segments;
        std::vector<bool> dirty;
    };
    Statements& st();
    /// The segment's notes table, and its pack if it is stored as one, read once per process
    /// (both never change); null notes when the segment is gone.
    std::shared_ptr<const SegmentNotes> notes_of(long long segment_id,
                                                 std::shared_ptr<const SegmentPack>& pack);
    /// Within a snapshot view (every search), term blocks come from block_cache_: the view's
    /// listing names exactly the segments whose blocks it may read, and those never change.
    bool cached_reads() const { return in_view_ && snapshot_; }
    /// The blocks of `term` in each of these segments of the user (ids ascending), read into
    /// the cache by one statement for the ones it lacks.
    std::vector<std::shared_ptr<const CachedTermBlocks>> cached_blocks(
        long long user_id, const std::string& term, const std::vector<long long>& segment_ids);
    WriteState& loaded(long long user_id);
    /// The user's segments as the database holds them now (of_user without the view).
    std::vector<SegmentRef> list(long long user_id);
    /// list() in one statement with the view's head of the user (view_head) and whether it
    /// has postings rows (view_has_rows), which it keeps.
    std::vector<SegmentRef> list_with_head(long long user_id);
    /// Decodes the listing statement's segment row into `rows` (its notes table follows in
    /// remember_listing); has_live: the live set was not NULL.
    void add_listed(std::vector<SegmentRef>& rows, bool has_live);
    /// The user's listing is `rows`: segments gone since the last one leave the caches, and
    /// each gets its notes table (those dropped meanwhile are left out).
    void remember_listing(long long user_id, std::vector<SegmentRef>& rows);
    long long insert_segment(long long user_id, const std::string& notes, const LiveDocs& live);
    void update_live(SegmentRef& s);
    void write_live_sets(WriteState& w);
    /// Inserts a built or merged segment (none when it has no notes) and keeps it in `w`.
    void add_segment(WriteState& w, long long user_id, const std::string& table,
                     std::vector<SegmentBlock>& blocks);


    soci::session& session_;
    const Dialect& dialect_;
    std::unique_ptr<Statements> st_;
    std::unique_ptr<SegmentBlockReader> blocks_;
    SegmentBlockWriter block_writer_;
    /// What never changes of a segment, read once: its notes table and its pack (null: none).
    struct Immutable {
        std::shared_ptr<const SegmentNotes> notes;
        std::shared_ptr<const SegmentPack> pack;
    };
    std::map<long long, Immutable> segment_cache_;
    TermBlockCache block_cache_{kTermBlockCacheBytes};
    std::map<long long, std::vector<long long>> listed_;  ///< user -> segment ids last listed
    bool in_view_ = false, snapshot_ = false;
    std::map<long long, std::vector<SegmentRef>> view_;  ///< user -> listing, within a view
    std::map<long long, std::optional<bool>> view_rows_;  ///< user -> has postings rows
    std::map<long long, ViewHead> view_heads_;            ///< user -> head, within a view
    WriteState write_;
};

}  // namespace notesd::detail
