// Text analysis shared by indexing and querying: Unicode folding, word splitting, CJK bigrams,
// English stemming. Every backend indexes the output of this module, never raw text, so the
// same note gives the same terms on SQLite, MariaDB and PostgreSQL.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace notesd {

/// Longest word kept, in code points; longer runs are cut (on both the index and the query side).
constexpr std::size_t kMaxTermChars = 48;

enum class TokenKind : std::uint8_t {
    Word,       ///< a run of letters, digits and marks outside CJK scripts (stemmed when English-like)
    CjkBigram,  ///< two adjacent characters of a Han/Hiragana/Katakana/Hangul run
    CjkSingle,  ///< a CJK run of exactly one character
};

struct Token {
    std::string term;     ///< the indexed form: folded, and stemmed for words of ASCII letters
    std::string surface;  ///< folded but unstemmed (the query parser uses it for prefix matching)
    std::uint32_t pos = 0;  ///< position in the field; equals the token's index in the stream
    TokenKind kind = TokenKind::Word;
    bool joined = false;  ///< a CJK bigram continuing the previous token's run
};

struct AnalyzeOptions {
    bool stem = true;  ///< Snowball English stemming of words made of ASCII letters only
};

/// Folded text: NFKC, full case folding, Latin/Greek/Cyrillic/Hebrew/Arabic diacritics removed,
/// default-ignorable code points dropped; invalid UTF-8 bytes become spaces. Never throws.
std::string fold_text(std::string_view text);

/// Splits text into tokens with consecutive positions (one token per position). Never throws.
std::vector<Token> analyze(std::string_view text, const AnalyzeOptions& opts = {});

/// One field's analysed form: the terms space-joined in position order, and their count.
struct FieldIndex {
    std::string terms;
    std::uint32_t length = 0;
};

/// Analyses one field (title or body).
FieldIndex index_field(std::string_view text, const AnalyzeOptions& opts = {});

/// The terms of a space-joined term string, in position order (views into it).
std::vector<std::string_view> split_terms(std::string_view stored);

/// Stems one folded word as analyze() does (unchanged when not eligible).
std::string stem_word(std::string_view folded_word);

// Plain-text excerpts, shared by the stored snippet and title (ingest/markdown) and the
// query-aware snippet (search/snippet).

/// Runs of whitespace become one space; leading and trailing whitespace is dropped.
std::string collapse_whitespace(std::string_view s);
/// At most max_chars code points: cut at a word boundary (or a grapheme boundary when no
/// word boundary is near) and end with "…", which counts within max_chars.
std::string truncate_text(std::string_view collapsed, std::size_t max_chars);

}  // namespace notesd
