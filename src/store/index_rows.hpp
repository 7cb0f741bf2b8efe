// The search index read as rows through SOCI (index_strategy.hpp): the postings, term_df,
// notes and snapshots tables, the database only finding and filtering (ranking is search/'s).
// The server backends use it as it is; SqliteIndex reuses its statistics and its
// collection-filtered postings.
#pragma once
#include <soci/soci.h>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/index_strategy.hpp"
#include "store/segments.hpp"
#include "store/soci_read.hpp"
#include "store/soci_stmt.hpp"

namespace notesd::detail {

/// Most collections one search filters by (the contract's limit).
constexpr int kMaxCollectionFilter = 100;

/// The row ids of the listed collections of the user, each once, at most kMaxCollectionFilter
/// (unknown, foreign and malformed ids are left out); their maintained note counts are added
/// to *notes.
std::vector<long long> listed_collections(long long user_id, const std::vector<std::string>& ids,
                                         const CollectionLookup& find, long long* notes = nullptr);

/// Postings rows fetched per round by RowIndex::read_postings.
constexpr std::size_t kPostingsBatch = 256;

/// Most notes one hits statement reads: a whole page of search results (limit is at most 50)
/// or the whole snapshot window (100); longer lists take several statements.
constexpr std::size_t kHitsMax = 100;
/// The IN-list lengths of the hits statements: a chunk of ids takes the shortest that holds it,
/// padded by repeating a listed id. The servers parse and plan every listed value at each
/// execution (SOCI's MySQL backend sends the values as text): a page of 20 results in a list
/// of 100 took MariaDB about twice as long as the 20 alone. The defaults of search (20),
/// related notes and extended search (10) fit exactly.
constexpr std::array<std::size_t, 4> kHitsLengths = {10, 20, 50, kHitsMax};

/// Terms whose document frequencies one statement reads (term_dfs: one round trip for a
/// query's terms on the server backends).
constexpr std::size_t kDfBatch = 16;

/// One note's stored index fields by id (:u, :uuid).
extern const char kIndexedNoteSql[];
/// The columns of a search hit: list_notes' columns plus plain_text, ending where the
/// condition on the uuid (n.uuid) follows.
extern const char kHitColumnsSql[];

/// The variables the row index's statements are bound to (SOCI binds addresses).
struct SearchParams {
    long long user_id = 0, limit = 0;
    long long created_min = 0, created_max = 0, updated_min = 0, updated_max = 0;
    /// SearchFilter::flags_any, under two placeholders: each placeholder binds one variable.
    long long flags_any = 0, flags_any_again = 0;
    long long collection_id = 0, now_us = 0;
    long long any_user = 0, one = 1;  ///< any_rows: its result, its LIMIT
    std::string term, prefix, prefix_end, note_uuid;
    /// The IN list of collection ids, padded by repeating a listed one.
    std::vector<long long> collection_ids = std::vector<long long>(kMaxCollectionFilter, 0);
    /// The IN list of the term_dfs statement, padded by repeating a listed term.
    std::vector<std::string> df_terms = std::vector<std::string>(kDfBatch);
    /// The IN list of the hits statements, padded by repeating a listed id.
    std::vector<std::string> note_uuids = std::vector<std::string>(kHitsMax);
    /// postings_at: the listed notes' (updated_us, uid_hi) pairs, padded.
    std::vector<long long> at_updated = std::vector<long long>(kPostingsAtMax, 0);
    std::vector<long long> at_uid_hi = std::vector<long long>(kPostingsAtMax, 0);
};

/// The result columns of a postings statement, kPostingsBatch rows at a time.
struct PostingBatch {
    std::vector<long long> uid_hi, uid_lo, updated_us, tfs, lens;
    std::vector<std::string> pos;
};

/// The statements of the row index, each prepared on first use, with their bound variables.
struct RowIndexStatements {
    RowIndexStatements(soci::session& s, const Dialect& d) : session(s), dialect(d) {}
    soci::statement& corpus();
    soci::statement& term_df();
    /// (term, df) of the listed df_terms the user has.
    soci::statement& term_dfs();
    /// A row when the user has postings rows.
    soci::statement& any_rows();
    soci::statement& prefix_terms(bool bounded);
    /// The postings of :t, newest first. collections: 0, 1 or (padded) kMaxCollectionFilter
    /// checked through note_collections; by_collection: one collection (:coll) drives instead;
    /// !filtered (only without collections): the time bounds and flags are not checked.
    soci::statement& postings(int collections, bool by_collection, bool filtered);
    /// The rows of :t at the (updated_us, uid_hi) pairs of at_updated / at_uid_hi.
    soci::statement& postings_at();
    /// The uuids of the notes in collection :coll.
    soci::statement& collection_notes();
    soci::statement& indexed_note();
    /// The hits of note_uuids[0, length), length one of kHitsLengths.
    soci::statement& hits(std::size_t length);
    soci::statement& snapshot_insert();
    soci::statement& snapshot_find();
    soci::statement& snapshot_purge();

    soci::session& session;
    const Dialect& dialect;
    SearchParams params;
    SearchCorpus corpus_row;
    long long df = 0;
    std::string term_row;
    PostingBatch batch;
    IndexedNote indexed_row;
    std::string indexed_title, indexed_content, indexed_plain_text;  // indexed_row's terms' source
    NoteRow hit_row;
    std::string hit_plain_text;
    SnapshotRecord snapshot_row;
    std::string snapshot_note_ids;  // space-joined

private:
    template <class Build>
    soci::statement& prepared(std::optional<soci::statement>& slot, Build&& build) {
        if (!slot) slot.emplace(build());
        return *slot;
    }
    std::optional<soci::statement> corpus_, term_df_, term_dfs_, any_rows_, prefix_bounded_, prefix_open_;
    std::optional<soci::statement> postings_unfiltered_, postings_filtered_;
    std::optional<soci::statement> postings_in_collection_, postings_in_collections_;
    std::optional<soci::statement> postings_by_collection_, postings_at_, indexed_note_;
    std::optional<soci::statement> collection_notes_;
    std::array<std::optional<soci::statement>, kHitsLengths.size()> hits_;
    std::optional<soci::statement> snapshot_insert_, snapshot_find_, snapshot_purge_;
};

class RowIndex : public IndexStrategy {
public:
    /// `segments`: SociStore's, which outlives the index.
    RowIndex(soci::session& s, const Dialect& d, Segments& segments, CollectionLookup find_collection)
        : session_(s), dialect_(d), segments_(segments), find_collection_(std::move(find_collection)) {}

    SearchCorpus search_corpus(long long user_id) override;
    std::vector<long long> term_dfs(long long user_id, const std::vector<std::string>& terms) override;
    std::vector<std::pair<std::string, long long>> prefix_terms(long long user_id,
                                                                const std::string& prefix,
                                                                int limit) override;
    using SearchIndex::term_postings;
    std::vector<TermPosting> term_postings(long long user_id, const std::string& term,
                                           const SearchFilter& f, int limit,
                                           bool with_positions) override;
    /// The rows' postings (rows_postings_at) and the segments'.
    std::vector<TermPosting> postings_at(long long user_id, const std::string& term,
                                         const std::vector<PostingNote>& notes) final;
    std::vector<IndexedNote> indexed_notes(long long user_id,
                                           const std::vector<std::string>& ids) override;
    std::vector<SearchHit> notes_by_ids(long long user_id, const std::vector<std::string>& ids,
                                        bool with_content) override;
    /// The snapshot's ids are canonical uuids and its fingerprint UTF-8 (SociStore checks).
    void save_snapshot(const SnapshotRecord& s) override;
    /// `id` is a canonical uuid (SociStore checks).
    std::optional<SnapshotRecord> find_snapshot(long long user_id, const std::string& id,
                                                long long now_us) override;
    int purge_snapshots(long long now_us, int max_rows) override;
    void drop_statements() override { statements_.reset(); }
    /// A read-only transaction at the dialect's snapshot isolation: the reads of one ReadScope
    /// (a search's statistics and postings, a list's total and page) see one committed state,
    /// as SQLite's read transaction does, even while a write or a fold commits in between.
    bool has_read_views() const override { return true; }
    void begin_read_view() override;
    void end_read_view() override;

protected:
    /// term_postings without a collection filter (the statement's parameters are set).
    virtual std::vector<TermPosting> postings_of_term(long long user_id, const std::string& term,
                                                      const SearchFilter& f, int limit,
                                                      bool with_positions);
    /// postings_at over the postings rows.
    virtual std::vector<TermPosting> rows_postings_at(long long user_id, const std::string& term,
                                                      const std::vector<PostingNote>& notes);
    RowIndexStatements& statements();
    soci::session& session_;
    const Dialect& dialect_;

private:
    std::vector<TermPosting> postings_in_collections(const std::vector<long long>& collections,
                                                     long long collection_notes, int limit);
    void read_postings(soci::statement& st, std::vector<TermPosting>& out);
    /// Whether term_postings must read the user's postings rows (index_rows_batched.cpp).
    bool may_have_rows(long long user_id);
    /// The rows' postings merged with the segments' in candidate order, at most `limit`.
    std::vector<TermPosting> with_segments(long long user_id, const std::string& term,
                                           const SearchFilter& f, int limit, bool with_positions,
                                           const std::vector<long long>& collections,
                                           std::vector<TermPosting> rows);
    Segments& segments_;
    CollectionLookup find_collection_;
    std::unique_ptr<RowIndexStatements> statements_;
};

}  // namespace notesd::detail
