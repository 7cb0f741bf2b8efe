// The search engine's other uses (contract section 10): extended search in date order, related
// notes by a note's most distinctive terms, and ranking collections by their title and
// description. All of them parse, analyse and score as the note search does (query.hpp, ranker.hpp).
#pragma once
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "base/model.hpp"
#include "search/ranker.hpp"

namespace notesd {

class SearchIndex;

/// Extended search's DATE order: notes of the user matching `query` and `filter` that come
/// after `after` in (updated_us desc, id desc) order, at most `limit`, skipping `excluded`. A
/// note matches as in the ranked search (one query word or phrase), so paging this way reaches
/// every match.
std::vector<RankedNote> matches_by_date(SearchIndex& index, long long user_id, const ParsedQuery& query,
                                        const SearchFilter& filter,
                                        const std::optional<PageKey>& after, std::size_t limit,
                                        const std::unordered_set<std::string>& excluded);

/// Related notes: how many of a note's terms make its query.
constexpr std::size_t kRelatedTerms = 24;

/// An OR query of the note's most distinctive stored terms: the kRelatedTerms highest by tf-idf
/// over the user's notes (a title occurrence counts like the ranker's title weight). Terms no
/// other note holds are left out (they find nothing), and so are terms in more than half of the
/// user's notes (they tell nothing apart). Empty when none is left.
ParsedQuery distinctive_query(SearchIndex& index, long long user_id, const IndexedNote& note);

/// Text of one collection for ranking.
struct CollectionText {
    std::string title;
    std::string description;
};

/// Indexes into `docs` of those matching `query` by title (weighted as a note title) or
/// description (as a body), best first; equal scores keep the order of `docs`. Statistics come
/// from `docs` alone. At most `limit`.
std::vector<std::size_t> rank_collection_texts(const std::string& query,
                                               const std::vector<CollectionText>& docs,
                                               std::size_t limit);

}  // namespace notesd
