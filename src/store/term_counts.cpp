// A note's terms counted per field with their positions (count_terms), from the space-joined
// term strings of index/note_index.hpp's analysis.
#include <algorithm>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "index/note_index.hpp"
#include "index/positions.hpp"
#include "store/soci_stmt.hpp"

namespace notesd {
namespace {

// Longest stored term in bytes: text.hpp cuts words at kMaxTermChars (48) code points. The
// bound keeps the term key columns within every backend's index key limit.
constexpr std::size_t kMaxTermBytes = 48 * 4;

// Calls f(term, position) for each term of one space-joined field, positions from 0.
template <class F>
void each_term(const std::string& f, F&& fn) {
    std::size_t i = 0;
    int position = 0;
    while (i < f.size()) {
        std::size_t e = f.find(' ', i);
        if (e == std::string::npos) e = f.size();
        if (e - i > kMaxTermBytes) throw std::invalid_argument("note index term too long");
        if (e > i) fn(std::string_view(f).substr(i, e - i), position++);
        i = e + 1;
    }
}

}  // namespace

namespace detail {

// The distinct terms of both fields with their counts and positions, sorted bytewise (the
// postings key order).
std::vector<TermCount> count_terms(const std::string& title, const std::string& body) {
    std::unordered_map<std::string_view, std::pair<std::vector<int>, std::vector<int>>> at;
    each_term(title, [&](std::string_view t, int p) { at[t].first.push_back(p); });
    each_term(body, [&](std::string_view t, int p) { at[t].second.push_back(p); });
    // Sorted as views, then built in order: a TermCount holds two strings to move.
    using Where = std::pair<std::vector<int>, std::vector<int>>;
    std::vector<std::pair<std::string_view, const Where*>> sorted;
    sorted.reserve(at.size());
    for (const auto& [term, where] : at) sorted.emplace_back(term, &where);
    std::sort(sorted.begin(), sorted.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<TermCount> out;
    out.reserve(sorted.size());
    for (const auto& [term, where] : sorted)
        out.push_back(TermCount{std::string(term), static_cast<long long>(where->first.size()),
                                static_cast<long long>(where->second.size()),
                                encode_positions(where->first, where->second)});
    return out;
}

std::vector<TermCount> count_stored_terms(const std::string& title, const std::string& plain_text) {
    const NoteTerms t = note_terms(title, plain_text);
    return count_terms(t.title_terms, t.body_terms);
}

}  // namespace detail

}  // namespace notesd
