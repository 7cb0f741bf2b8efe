// Search: candidate retrieval through the store, BM25F ranking (rank.hpp), snapshots, and
// query-aware snippets. The policy of contract section 5 lives here; SQL lives in the store.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/model.hpp"
#include "search/rank.hpp"
#include "search/word_scan.hpp"

namespace notesd {

class SearchIndex;

constexpr std::size_t kSnapshotSize = 100;       ///< results captured per search (contract)
constexpr long long kPostingBudget = 20000;      ///< postings fetched per query term at most
constexpr std::size_t kMaxCandidates = 500;      ///< notes scored per query at most

/// The ids of at most kSnapshotSize notes of the user matching `query` and `filter`, best first
/// (score desc, updated_at desc, id desc). Work is bounded by the two constants above.
std::vector<std::string> ranked_note_ids(SearchIndex& index, long long user_id, const ParsedQuery& query,
                                         const SearchFilter& filter);

class WordMatcher;

/// Query-aware snippets of one query for a page of notes; a word met again (in the same note
/// or a later one) is not analysed again.
class SnippetMaker {
public:
    explicit SnippetMaker(const ParsedQuery& query);  ///< query must outlive the maker
    ~SnippetMaker();
    SnippetMaker(const SnippetMaker&) = delete;
    SnippetMaker& operator=(const SnippetMaker&) = delete;
    /// A plain-text excerpt of at most 200 characters around the passage of `plain_text` that
    /// matches most query terms; empty when nothing matches (the caller keeps the stored
    /// snippet).
    std::string snippet(std::string_view plain_text);

private:
    const ParsedQuery& query_;
    std::unique_ptr<WordMatcher> matcher_;
    std::vector<WordSpan> words_;  // lead_words of the note at hand
};

/// SnippetMaker(query).snippet(plain_text): one note's snippet.
std::string query_snippet(std::string_view plain_text, const ParsedQuery& query);

}  // namespace notesd
