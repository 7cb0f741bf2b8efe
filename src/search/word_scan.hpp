// Finding the words of a plain text that may carry a query term, without analysing the others
// (query snippets, snippet.cpp). A word is a maximal run of bytes other than ' '.
#pragma once
#include <bitset>
#include <cstddef>
#include <string_view>
#include <vector>

namespace notesd {

/// How query terms can start. Folding an ASCII word only lowers its case, and stemming only
/// rewrites from the third letter on, so an ASCII word can only carry a term that starts with
/// the first two characters, lowered, of one of its alphanumeric runs ("(Kubernetes)",
/// "foo-bar"). A word with a byte >= 0x80 may carry anything.
class TermLeads {
public:
    /// A term or a prefix of the query.
    void add(std::string_view term);
    /// Whether an alphanumeric run starting with bytes c0, c1 (c1 < 0 or not alphanumeric: the
    /// run is one byte long) may carry a term.
    bool run_may_match(unsigned char c0, int c1) const;
    /// The reference test of a whole word, byte by byte.
    bool word_may_match(std::string_view word) const;

private:
    std::bitset<1 << 16> pairs_;  // (first byte << 8 | second byte) of the terms
    bool single_[256] = {};       // terms of one byte, or whose second byte is not ASCII
};

struct WordSpan {
    std::size_t index;         ///< the word's number in the text, from 0
    std::size_t begin, end;  ///< its bytes
};

/// The words among the first max_words of `text` that leads.word_may_match accepts, in order,
/// appended to out. Scans 64 bytes at a time (SSE2 where the compiler has it).
void lead_words(std::string_view text, const TermLeads& leads, std::size_t max_words,
                std::vector<WordSpan>& out);

/// The same result one word at a time: the reference lead_words is tested against.
void lead_words_simple(std::string_view text, const TermLeads& leads, std::size_t max_words,
                       std::vector<WordSpan>& out);

/// Where word number index - back begins (and ends), given that word number index begins at
/// `begin`: back words before it, at most to the first word.
WordSpan word_before(std::string_view text, std::size_t index, std::size_t begin, std::size_t back);

}  // namespace notesd
