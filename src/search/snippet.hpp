// Query-aware snippets: the passage of a note's plain text that holds most query words, found
// by the same analysis as the index (text.hpp), scanning only words that may match
// (word_scan.hpp).
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "search/query.hpp"
#include "search/word_scan.hpp"

namespace notesd {

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
