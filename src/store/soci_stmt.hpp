// Internals of SociStore: the prepared-statement cache with the variables each statement binds
// (SOCI binds addresses, so these structs live behind a unique_ptr and never move), a small
// statement builder, and the error guard shared by soci_store.cpp and soci_write.cpp.
#pragma once
#include <soci/soci.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "index/note_index.hpp"
#include "index/segment.hpp"
#include "base/model.hpp"
#include "base/util.hpp"
#include "store/dialect.hpp"

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
/// The non-empty items of a list stored as text joined by `sep`.
std::vector<std::string> split_list(const std::string& s, char sep);
/// The items joined by `sep` (the inverse of split_list for non-empty items).
std::string join_list(const std::vector<std::string>& items, char sep);
/// "1, 2, 3": ids for an IN list written into a statement's text (integers, so safe there).
std::string join_ids(const std::vector<long long>& ids);

/// tokens.scope: "read-write" or "read-only". Any other text reads as read-only, so a damaged
/// row never grants writes.
const char* token_scope_name(TokenScope scope);
TokenScope token_scope(const std::string& name);

/// attachments.kind: "image", "file" or "audio" (unknown text reads as a file).
const char* attachment_kind_name(AttachmentKind kind);
AttachmentKind attachment_kind(const std::string& name);

/// Executes a statement that returns no rows.
inline void exec(soci::statement& st) { st.execute(true); }

/// A write transaction begun with the dialect's SQL; rolls back unless commit() ran.
class WriteTxn {
public:
    /// after_commit runs once COMMIT has returned (SQLite: the WAL sync, sqlite_direct.hpp).
    WriteTxn(soci::session& s, const std::vector<std::string>& begin,
             std::function<void()> after_commit = {})
        : s_(s), after_commit_(std::move(after_commit)) {
        for (const std::string& st : begin) s_ << st;
    }
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
        committed_at_ = std::chrono::steady_clock::now();
        if (after_commit_) after_commit_();
    }
    /// When COMMIT returned: the end of the lock, before after_commit's sync (which holds none).
    std::chrono::steady_clock::time_point committed_at() const { return committed_at_; }

private:
    soci::session& s_;
    std::function<void()> after_commit_;
    bool done_ = false;
    std::chrono::steady_clock::time_point committed_at_;
};

/// Rows per multi-row postings insert and term_df upsert: on a server backend an import's cost
/// is round trips, one per statement, and a note has about as many postings as distinct words.
constexpr std::size_t kBatchRows = 32;
/// The sizes of the term_df upserts, largest first: an increase is a row of its own (ON CONFLICT
/// cannot touch a row twice in one statement, so a short batch cannot be padded); the rest of a
/// change set after the kBatchRows statements costs at most one statement per other size.
/// Decreases are upserted too: an UPDATE ... CASE of 32 terms, whose IN list could have been
/// padded, ran 5 times slower on PostgreSQL once its generic plan (bitmap scan of the user's
/// rows) replaced the custom ones.
constexpr std::array<std::size_t, 6> kDfUpsertRows{kBatchRows, 16, 8, 4, 2, 1};

/// One postings row of a multi-row insert.
struct PostingRow {
    std::string term;
    long long updated_us = 0, uid_hi = 0, uid_lo = 0, note_id = 0, created_us = 0, flags = 0;
    long long tfs = 0, lens = 0;  // pack_pair'ed counts (index/postings_format.hpp)
    std::string pos;              // positions.hpp's text form
};

/// Postings rows of one user inserted one or kBatchRows per statement (PostingBuffer fills
/// them); apart from WriteStatements so that a migration's rebuild of the postings (schema
/// 004) needs none of the statements naming columns that later schemas add.
struct PostingInserts {
    explicit PostingInserts(soci::session& s);
    long long user_id = 0;
    std::array<PostingRow, kBatchRows> rows;  ///< all of `many`'s; the first one also `one`'s
    soci::statement one, many;
};

/// Statements of write_batch and delete_note, sharing one set of bound variables.
struct WriteStatements {
    WriteStatements(soci::session& s, const Dialect& d);

    // the row written: a note (with its text) or a collection
    long long user_id = 0, row_id = 0, inserted_id = 0;
    long long created_us = 0, updated_us = 0, flags = 0, version = 0;
    std::string note_uuid, title, snippet, content, collection_uuids, audio_uuids, content_hash;
    std::string plain_text;  ///< as stored (plain_text_codec.hpp)
    long long title_len = 0, body_len = 0;
    std::string collection_uuid, description;
    soci::indicator description_ind = soci::i_ok;
    // a link or an attachment of the note
    long long collection_id = 0, note_count_delta = 0;
    std::string attachment_uuid, kind, target;
    // the users row's maintained counts
    long long notes_delta = 0, collections_delta = 0, title_tokens_delta = 0, body_tokens_delta = 0;
    // what a lookup found
    long long found_id = 0, found_created_us = 0, found_updated_us = 0, linked_collection_id = 0;
    long long found_version = 0, found_flags = 0;
    std::string found_title, found_description, found_hash;
    soci::indicator found_description_ind = soci::i_ok;
    // the indexed fields of a note about to change (note_stored_index)
    std::string old_title, old_content, old_plain_text;  ///< old_plain_text as stored
    long long old_title_len = 0, old_body_len = 0, old_created_us = 0, old_updated_us = 0;
    long long old_flags = 0;
    // one postings row's key / one term_df change
    std::string term;
    long long posting_updated_us = 0, posting_uid_hi = 0, posting_uid_lo = 0;
    // term_df changes of one statement (apply_df): the rows of an upsert, or a decrease's terms
    std::array<std::string, kBatchRows> df_terms;
    std::array<long long, kBatchRows> df_deltas{};

    soci::statement lock_user, collection_find, collection_insert, collection_update;
    soci::statement note_find, note_links, note_insert, note_update;
    soci::statement text_insert, text_update, text_delete;
    soci::statement links_delete, link_insert, attachments_delete, attachment_insert;
    soci::statement collection_count_add, user_counts_add, note_delete;
    soci::statement note_stored_index, posting_delete;
    /// df_upserts[i] adds kDfUpsertRows[i] changes; df_drop_empty then deletes the rows of
    /// kBatchRows decreased terms that reached 0 (a short batch padded with its last term).
    std::array<soci::statement, kDfUpsertRows.size()> df_upserts;
    soci::statement df_drop_empty;
    PostingInserts postings;  // with user_id of its own
};

using notesd::uuid_from_halves;  // util.hpp
using notesd::uuid_halves;

/// A term of a note with its number of occurrences in the title and in the body, and where
/// (encode_positions of both fields' positions): what a segment takes of each term.
using TermCount = SegmentTerm;

/// The distinct terms of two space-joined term strings with their counts and positions,
/// sorted bytewise.
std::vector<TermCount> count_terms(const std::string& title_terms, const std::string& body_terms);
/// count_terms of a stored note: the terms its title and plain text analyse into.
std::vector<TermCount> count_stored_terms(const std::string& title, const std::string& plain_text);

/// count_stored_terms of a note's stored version, counted before the write lock (an update's or
/// delete's old terms); the write uses them only while the stored title and text are these.
struct StoredTerms {
    std::string title, plain_text;
    std::vector<TermCount> terms;
};

/// A NoteInput checked and canonicalised before its transaction starts.
struct NoteWrite {
    const NoteInput* in = nullptr;
    std::string id;                            // canonical uuid
    long long hi = 0, lo = 0;                  // uuid_halves(id)
    std::vector<TermCount> terms;              // distinct title and body terms, sorted (freed by prebuild_segment)
    long long title_len = 0, body_len = 0;     // the fields' lengths in terms
    std::vector<std::string> collections;      // canonical, de-duplicated, in input order
    std::vector<std::string> attachment_ids;   // canonical, parallel to in->attachments
    std::string collections_text, audio_text;  // the denormalised columns
    std::string hash;                          // over every stored field
    std::string stored_plain_text;             // in->plain_text as note_text stores it
    /// The version to store; unset: 1 for a new note, the stored one plus one for a change.
    std::optional<long long> version;
    /// The stored version's terms if counted before the lock (else counted under it).
    const StoredTerms* before = nullptr;
};

/// An import batch's segment and term_df changes, built before its write transaction on the
/// assumption that every note of it is new (a first import): the writer then only checks that
/// assumption note by note. `taken` collects the notes written so far that it stands for; when
/// a note turns out to exist, to be trashed or to replace a pending entry, those notes go into
/// the transaction's own segment the usual way and the prebuilt one is dropped.
struct PrebuiltSegment {
    SegmentBuilder segment;
    std::vector<NoteWrite>* writes = nullptr;  // the batch while the segment holds its terms instead
    std::vector<std::pair<std::string, int>> df;  // the notes holding each term
    std::size_t notes = 0;
    std::vector<const NoteWrite*> taken;
    bool spent = false;  ///< its segment used or dropped
};

/// PrebuiltSegment of these notes (CPU only: no database). Each note's terms are freed once the
/// segment holds them (take_back_terms derives them again): the batch's largest part, not kept twice while it waits for
/// its write.
void prebuild_segment(std::vector<NoteWrite>& notes, PrebuiltSegment& out);

struct IndexDelta;  // index_strategy.hpp
/// The whole note n into the delta's segment; term_df gains the terms old_terms lacks.
void add_to_segment(const NoteWrite& n, const std::vector<TermCount>& old_terms, IndexDelta& delta);
/// A note of the batch was not new: every note of the batch has its terms derived again, the
/// notes delta.prebuilt stood for so far go into the delta's own segment the usual way, and the
/// prebuilt one is not used.
void drop_prebuilt(IndexDelta& delta);
/// The terms prebuild_segment freed, derived again (for a batch written without its prebuilt
/// segment: dropped, or spent by a write that then failed).
void take_back_terms(PrebuiltSegment& p);
/// Every note of the batch was new and written: delta.prebuilt becomes the delta's segment.
void use_prebuilt(IndexDelta& delta);

/// The canonical form of a uuid; invalid_argument naming `what` otherwise.
std::string canonical(const std::string& uuid, const char* what);
/// invalid_argument naming `what` when s is not valid UTF-8.
void need_utf8(const std::string& s, const char* what);
/// A note's title and plain text checked (UTF-8) and analysed: its index terms and counts.
struct AnalysedNote {
    std::string title, plain_text;  ///< what was analysed
    NoteTerms text;                 ///< the fields' terms as text (prepare_note hashes them)
    std::vector<TermCount> terms;   ///< count_terms of them
};
/// Pure CPU and no database: an API write analyses its note before it takes the write lock, so
/// that two workers' analyses run beside each other's transactions instead of inside them.
AnalysedNote analyse_note(const std::string& title, const std::string& plain_text);
/// A note checked (ids, UTF-8), analysed (its terms, soci_prepare.cpp) and hashed, before
/// any transaction; invalid_argument when it cannot be written. `analysed`: analyse_note of
/// this note's title and plain text when the caller has it (it is used only when they match).
NoteWrite prepare_note(const NoteInput& n, std::optional<AnalysedNote> analysed = std::nullopt);
/// prepare_note of each note, in order; a large batch on several threads. The first invalid
/// note in batch order fails it.
std::vector<NoteWrite> prepare_notes(const std::vector<NoteInput>& notes);
/// Threads a bulk step spreads its CPU work over (a large batch's analysis, notesctl's merges):
/// one a core, at most four.
unsigned bulk_threads();

}  // namespace detail

}  // namespace notesd
