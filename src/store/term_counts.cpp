// A note's terms counted per field with their positions (count_terms), from the space-joined
// term strings of index/note_index.hpp's analysis.
#include <algorithm>
#include <stdexcept>
#include <string_view>

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
// postings key order). Every occurrence is sorted by (term, field, position) and the runs of one
// term are counted: no allocation per term beyond its TermCount (a hash map of two position
// lists per term allocated three times per distinct term).
std::vector<TermCount> count_terms(const std::string& title, const std::string& body) {
    struct Occurrence {
        std::string_view term;
        int field = 0;  // 0 title, 1 body
        int position = 0;
    };
    std::vector<Occurrence> all;
    all.reserve((title.size() + body.size()) / 4 + 1);
    each_term(title, [&](std::string_view t, int p) { all.push_back(Occurrence{t, 0, p}); });
    each_term(body, [&](std::string_view t, int p) { all.push_back(Occurrence{t, 1, p}); });
    std::sort(all.begin(), all.end(), [](const Occurrence& a, const Occurrence& b) {
        if (const int c = a.term.compare(b.term)) return c < 0;
        return a.field != b.field ? a.field < b.field : a.position < b.position;
    });
    std::vector<TermCount> out;
    std::vector<int> at[2];
    for (std::size_t i = 0; i < all.size();) {
        at[0].clear();
        at[1].clear();
        std::size_t j = i;
        for (; j < all.size() && all[j].term == all[i].term; ++j) at[all[j].field].push_back(all[j].position);
        out.push_back(TermCount{std::string(all[i].term), static_cast<long long>(at[0].size()),
                                static_cast<long long>(at[1].size()), encode_positions(at[0], at[1])});
        i = j;
    }
    return out;
}

std::vector<TermCount> count_stored_terms(const std::string& title, const std::string& plain_text) {
    const NoteTerms t = note_terms(title, plain_text);
    return count_terms(t.title_terms, t.body_terms);
}

}  // namespace detail

}  // namespace notesd
