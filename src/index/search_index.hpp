// The search index as the search module sees it: per-user statistics, the term dictionary,
// postings in candidate order, and each note's stored index fields. Terms are the output of
// index/text.hpp's analysis; every read is scoped to one user. The implementations (SQL)
// live in src/store/; search/ reaches storage only through this interface.
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "base/model.hpp"

namespace notesd {

/// Most notes one SearchIndex::postings_at call takes.
constexpr std::size_t kPostingsAtMax = 32;

/// Candidate order of a term's postings: most recently updated first, ties by uuid descending.
inline bool candidate_before(const TermPosting& a, const TermPosting& b) {
    if (a.updated_us != b.updated_us) return a.updated_us > b.updated_us;
    return a.uid_hi != b.uid_hi ? a.uid_hi > b.uid_hi : a.uid_lo > b.uid_lo;
}

class SearchIndex {
public:
    virtual ~SearchIndex() = default;

    /// The user's note count and token sums (BM25F's corpus statistics).
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
};

}  // namespace notesd
