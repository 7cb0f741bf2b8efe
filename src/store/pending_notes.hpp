// Pending index entries (schema 013): an API write's index change as one row per note instead
// of a row per posting and a term_df row per term.
//
// A note is pending when its current version's postings are in an index_pending row rather
// than in a segment or postings rows. The row holds that version's terms (with counts and
// positions) and the names of the terms term_df still counts for the note (`minus`: the terms
// of the version last folded, whose postings were marked dead or deleted when the note became
// pending). So the index a search reads is: segments and postings rows, plus the pending
// entries' postings, with each term's document frequency term_df + (pending entries holding
// it) - (pending entries naming it in `minus`). The background merger folds pending entries
// into a segment and term_df in short transactions (SociStore::fold_pending).
#pragma once
#include <soci/soci.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/model.hpp"
#include "index/segment.hpp"
#include "store/dialect.hpp"
#include "store/segments.hpp"

namespace notesd::detail {

/// One pending row, decoded.
struct PendingEntry {
    long long id = 0;       ///< never reused
    long long note_id = 0;  ///< 0: the note is gone; only `minus` waits to be folded
    SegmentNote note;       ///< the current version's key, filter columns and field lengths
    std::vector<SegmentTerm> terms;  ///< sorted bytewise; empty when the note is gone
    std::vector<std::string> minus;  ///< sorted bytewise
};
using PendingList = std::vector<std::shared_ptr<const PendingEntry>>;

/// df(term) as the pending entries change term_df's count.
long long pending_df_change(const PendingList& pending, const std::string& term);
/// Appends the pending postings of `term` passing `f` (and `keep`), in candidate order.
void pending_term_postings(const PendingList& pending, const std::string& term,
                           const SearchFilter& f, const NoteKeep& keep, bool with_positions,
                           std::vector<TermPosting>& out);
/// The pending notes' terms starting with `prefix` (bytewise), each once.
std::vector<std::string> pending_prefix_terms(const PendingList& pending, const std::string& prefix);

class PendingNotes {
public:
    PendingNotes(soci::session& s, const Dialect& d);
    ~PendingNotes();
    PendingNotes(const PendingNotes&) = delete;
    PendingNotes& operator=(const PendingNotes&) = delete;

    void drop_statements();

    // ---- reads ----
    /// Within a view the user's entries are listed once (SociStore::begin_read).
    void begin_view() { in_view_ = true; }
    void end_view() {
        in_view_ = false;
        view_.clear();
    }
    /// The user's pending entries (decoded rows are kept by id across views).
    PendingList of_user(long long user_id);
    /// Within a view whose head found no entries of the user (Segments::view_head): of_user's
    /// answer without its statement.
    PendingList none_of_user(long long user_id);
    /// The pending notes' collection ids, by note id.
    std::map<long long, std::vector<long long>> collections_of(long long user_id);

    // ---- writes: in the caller's write transaction, the user locked ----
    struct Stored {
        long long id = 0;
        std::vector<std::string> minus;
    };
    /// The note's pending row, if it has one.
    std::optional<Stored> find(long long user_id, long long uid_hi, long long uid_lo);
    void erase(long long id);
    /// Of the rows `ids` of the user, those that still exist (a write that replaces or removes a
    /// note's entry deletes its row, and row ids are never reused), in ascending order.
    std::vector<long long> still_pending(long long user_id, std::vector<long long> ids);
    /// Deletes the rows `ids` of the user.
    void erase(long long user_id, const std::vector<long long>& ids);
    /// Inserts the entry's row (the note has none).
    void insert(long long user_id, const PendingEntry& e);
    long long count(long long user_id);
    /// The user's oldest entries, at most `limit`.
    std::vector<PendingEntry> oldest(long long user_id, long long limit);

private:
    struct Statements;
    Statements& st();
    std::vector<long long> ids_of(long long user_id);
    /// The row; none when it is gone.
    std::optional<PendingEntry> read_row(long long id);

    soci::session& session_;
    const Dialect& dialect_;
    std::unique_ptr<Statements> st_;
    bool in_view_ = false;
    std::map<long long, PendingList> view_;  ///< user -> entries, within a view
    std::map<long long, std::map<long long, std::shared_ptr<const PendingEntry>>> cache_;  ///< user -> id -> entry
};

}  // namespace notesd::detail
