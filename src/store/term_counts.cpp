// A note's terms counted per field with their positions (count_terms), from the space-joined
// term strings of index/note_index.hpp's analysis.
#include <algorithm>
#include <cstdint>
#include <functional>
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
// postings key order). Each occurrence finds its term in an open-addressed table over the
// fields' own bytes and is chained behind the term's previous occurrence, so a term's positions
// come out ascending without sorting; only the distinct terms (about half the occurrences of a
// 2 KB note) are sorted. Sorting every occurrence by (term, field, position) cost twice as much:
// its string comparisons were 7% of an import (doc/benchmarks.md).
std::vector<TermCount> count_terms(const std::string& title, const std::string& body) {
    struct Term {
        std::string_view term;
        std::uint32_t first = 0, last = 0;  // occurrence indexes, chained through `next`
        std::uint32_t title_tf = 0, body_tf = 0;
    };
    std::vector<Term> terms;
    std::vector<std::uint32_t> next;  // next[i]: the same term's next occurrence
    const std::size_t guess = (title.size() + body.size()) / 4 + 1;
    terms.reserve(guess);
    next.reserve(guess);
    std::size_t mask = 63;
    while (mask < 2 * guess) mask = mask * 2 + 1;
    std::vector<std::uint32_t> slots(mask + 1, 0);  // term index + 1; 0 free
    const std::hash<std::string_view> hash;
    auto grow = [&] {
        mask = mask * 2 + 1;
        slots.assign(mask + 1, 0);
        for (std::size_t t = 0; t < terms.size(); ++t) {
            std::size_t s = hash(terms[t].term) & mask;
            while (slots[s] != 0) s = (s + 1) & mask;
            slots[s] = static_cast<std::uint32_t>(t + 1);
        }
    };
    auto add = [&](std::string_view t, bool in_title) {
        if (2 * terms.size() >= mask) grow();
        const std::uint32_t at = static_cast<std::uint32_t>(next.size());
        next.push_back(0);
        std::size_t s = hash(t) & mask;
        while (slots[s] != 0 && terms[slots[s] - 1].term != t) s = (s + 1) & mask;
        if (slots[s] == 0) {
            terms.push_back(Term{t, at, at, 0, 0});
            slots[s] = static_cast<std::uint32_t>(terms.size());
        } else {
            Term& known = terms[slots[s] - 1];
            next[known.last] = at;
            known.last = at;
        }
        Term& term = terms[slots[s] - 1];
        ++(in_title ? term.title_tf : term.body_tf);
    };
    int title_count = 0;
    each_term(title, [&](std::string_view t, int) { add(t, true); ++title_count; });
    each_term(body, [&](std::string_view t, int) { add(t, false); });

    // The sort compares the terms' first eight bytes as one number (bytewise order when they
    // differ) before their bytes: most comparisons then end without a call to memcmp.
    std::vector<std::pair<std::uint64_t, std::uint32_t>> order(terms.size());
    for (std::size_t t = 0; t < terms.size(); ++t) {
        std::uint64_t key = 0;
        const std::string_view term = terms[t].term;
        for (std::size_t b = 0; b < 8; ++b)
            key = key << 8 | (b < term.size() ? static_cast<unsigned char>(term[b]) : 0u);
        order[t] = {key, static_cast<std::uint32_t>(t)};
    }
    std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
        if (a.first != b.first) return a.first < b.first;
        return terms[a.second].term < terms[b.second].term;
    });
    std::vector<TermCount> out;
    out.reserve(terms.size());
    std::vector<int> at[2];
    for (const auto& [key, index] : order) {
        const Term& t = terms[index];
        at[0].clear();
        at[1].clear();
        std::uint32_t i = t.first;
        for (std::uint32_t n = t.title_tf + t.body_tf; n > 0; --n, i = next[i]) {
            const int occurrence = static_cast<int>(i);
            if (occurrence < title_count) at[0].push_back(occurrence);
            else at[1].push_back(occurrence - title_count);
        }
        out.push_back(TermCount{std::string(t.term), static_cast<long long>(t.title_tf),
                                static_cast<long long>(t.body_tf), encode_positions(at[0], at[1])});
    }
    return out;
}

std::vector<TermCount> count_stored_terms(const std::string& title, const std::string& plain_text) {
    const NoteTerms t = note_terms(title, plain_text);
    return count_terms(t.title_terms, t.body_terms);
}

}  // namespace detail

}  // namespace notesd
