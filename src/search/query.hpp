// Query parsing: any text becomes clauses (terms, the last word's prefix, quoted phrases,
// proximity pairs) through the same analysis (text.hpp) the index uses, so a query term and a
// stored term compare as plain strings.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "index/text.hpp"

namespace notesd {

constexpr std::size_t kMaxQueryClauses = 32;     ///< term/phrase clauses kept, in query order
constexpr std::size_t kMaxProximityClauses = 16;
constexpr std::size_t kMaxPrefixExpansions = 16; ///< dictionary terms a prefix may stand for
constexpr std::size_t kMinPrefixChars = 2;       ///< shorter last words match exactly only

enum class ClauseKind {
    Term,       ///< one exact term
    Prefix,     ///< the last query word: its stem exactly, or any listed expansion of `prefix`
    Phrase,     ///< quoted words (or a CJK run): all terms adjacent and in order
    Proximity,  ///< two adjacent unquoted query words found close together: a bonus, never a match
};

struct Clause {
    ClauseKind kind = ClauseKind::Term;
    std::vector<std::string> terms;  ///< Term/Prefix: one; Phrase/Proximity: two or more, in order
    std::string prefix;              ///< Prefix only: folded, unstemmed text the expansions start with
    int qtf = 1;                     ///< times the term was repeated in the query
    bool stop = false;               ///< a stopword: low ranking weight (still matched and indexed)
};

struct ParsedQuery {
    std::vector<Clause> clauses;
    /// True when the query has no searchable term (e.g. only punctuation or emoji): no results.
    bool empty() const;
    /// Distinct exact terms whose per-user document frequency the caller looks up, sorted.
    std::vector<std::string> lookup_terms() const;
    /// The prefix clause's text, or empty when the query has none (caller lists its expansions).
    std::string prefix() const;
    /// Stable text form of the parsed query: equal for queries that search the same way.
    std::string canonical() const;
};

/// Parses any text into clauses; never throws. Quotes (" “ ” „) delimit phrases, an unclosed
/// quote runs to the end, the last unquoted word is a prefix; everything else is plain text.
ParsedQuery parse_query(std::string_view text, const AnalyzeOptions& opts = {});

}  // namespace notesd
