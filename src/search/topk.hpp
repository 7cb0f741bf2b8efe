// The top k of a search: which terms' postings find candidates (a plan within a posting
// budget), the best candidates by an upper bound of their score, and the walk that turns
// bounds into the exact best kSnapshotSize (score.hpp's monotonicity makes the bounds bounds).
// SQL lives in the store; this module only decides what to read.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "base/model.hpp"
#include "search/ranker.hpp"

namespace notesd {

class SearchIndex;

constexpr std::size_t kSnapshotSize = 100;       ///< results captured per search (contract)
constexpr long long kPostingBudget = 20000;      ///< postings fetched per query term at most
constexpr std::size_t kMaxCandidates = 500;      ///< notes scored per query at most

/// The ids of at most kSnapshotSize notes of the user matching `query` and `filter`, best first
/// (score desc, updated_at desc, id desc). Work is bounded by the two constants above.
std::vector<std::string> ranked_note_ids(SearchIndex& index, long long user_id, const ParsedQuery& query,
                                         const SearchFilter& filter);

/// The best `count` notes of the user matching `query` and `filter` with their scores, in
/// ranks_before order. Candidates are bounded by max(kMaxCandidates, count).
std::vector<RankedNote> ranked_notes(SearchIndex& index, long long user_id, const ParsedQuery& query,
                                     const SearchFilter& filter, std::size_t count);

/// The user's corpus statistics, the query terms' document frequencies and the prefix's
/// expansions: what a Ranker of `query` needs.
QueryStats query_stats(SearchIndex& index, long long user_id, const ParsedQuery& query);

}  // namespace notesd
