#include "search/word_scan.hpp"

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "base/util.hpp"

namespace notesd {
namespace {

unsigned char lower(unsigned char c) { return c >= 'A' && c <= 'Z' ? static_cast<unsigned char>(c + 32) : c; }

bool alnum(unsigned char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Bit i of each mask describes byte i of a 64-byte block.
struct ByteMasks {
    std::uint64_t space = 0, alnum = 0, high = 0;
};

ByteMasks classify64(const unsigned char* p) {
    ByteMasks m;
#if defined(__SSE2__)
    const __m128i sp = _mm_set1_epi8(' '), below0 = _mm_set1_epi8('0' - 1), above9 = _mm_set1_epi8('9' + 1);
    const __m128i belowa = _mm_set1_epi8('a' - 1), abovez = _mm_set1_epi8('z' + 1), caseb = _mm_set1_epi8(0x20);
    for (int k = 0; k < 4; ++k) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
        // signed compares: bytes >= 0x80 are negative, so never digits or letters
        const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, below0), _mm_cmplt_epi8(v, above9));
        const __m128i folded = _mm_or_si128(v, caseb);
        const __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(folded, belowa), _mm_cmplt_epi8(folded, abovez));
        const int shift = 16 * k;
        m.space |= static_cast<std::uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, sp)))) << shift;
        m.alnum |= static_cast<std::uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(digit, letter)))) << shift;
        m.high |= static_cast<std::uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(v))) << shift;
    }
#else
    for (int i = 0; i < 64; ++i) {
        const std::uint64_t bit = std::uint64_t{1} << i;
        if (p[i] == ' ') m.space |= bit;
        if (alnum(p[i])) m.alnum |= bit;
        if (p[i] >= 0x80) m.high |= bit;
    }
#endif
    return m;
}

}  // namespace

void TermLeads::add(std::string_view t) {
    if (t.empty()) return;
    const unsigned char c0 = static_cast<unsigned char>(t[0]);
    if (t.size() == 1 || static_cast<unsigned char>(t[1]) >= 0x80) {
        single_[c0] = true;
        return;
    }
    pairs_.set(static_cast<std::size_t>(c0 << 8 | static_cast<unsigned char>(t[1])));
}

bool TermLeads::run_may_match(unsigned char c0, int c1) const {
    c0 = lower(c0);
    if (single_[c0]) return true;
    return c1 >= 0 && alnum(static_cast<unsigned char>(c1)) &&
           pairs_.test(static_cast<std::size_t>(c0 << 8 | lower(static_cast<unsigned char>(c1))));
}

bool TermLeads::word_may_match(std::string_view w) const {
    bool in_run = false;  // the previous byte is alphanumeric
    for (std::size_t i = 0; i < w.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(w[i]);
        if (c >= 0x80) return true;
        const bool a = alnum(c);
        if (a && !in_run && run_may_match(c, i + 1 < w.size() ? static_cast<unsigned char>(w[i + 1]) : -1))
            return true;
        in_run = a;
    }
    return false;
}

void lead_words_simple(std::string_view text, const TermLeads& leads, std::size_t max_words,
                       std::vector<WordSpan>& out) {
    const char* const base = text.data();
    const char* const end = base + text.size();
    std::size_t n = 0, i = 0;
    while (n < max_words) {
        while (i < text.size() && text[i] == ' ') ++i;
        if (i == text.size()) break;
        const std::size_t j = static_cast<std::size_t>(find_space(base + i + 1, end) - base);
        if (leads.word_may_match(text.substr(i, j - i))) out.push_back(WordSpan{n, i, j});
        ++n;
        i = j;
    }
}

// Per block: the word starts (a byte other than ' ' after ' ' or at the text's start) are
// counted, and only the words holding a high byte or an alphanumeric run whose first two bytes
// pass TermLeads are looked at; each such word is reported once, from its first byte.
void lead_words(std::string_view text, const TermLeads& leads, std::size_t max_words,
                std::vector<WordSpan>& out) {
    const auto* const t = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t size = text.size();
    std::size_t words = 0;           // words begun before the block
    std::uint64_t after_space = 1;   // the byte before the block is ' ' (or there is none)
    std::uint64_t after_alnum = 0;   // the byte before the block is alphanumeric
    std::size_t next = 0;            // bytes before this belong to words already reported
    for (std::size_t at = 0; at < size; at += 64) {
        unsigned char pad[64];
        const unsigned char* p = t + at;
        if (size - at < 64) {  // the last block: padded with spaces, which begin no word
            std::memset(pad, ' ', sizeof pad);
            std::memcpy(pad, p, size - at);
            p = pad;
        }
        const ByteMasks m = classify64(p);
        const std::uint64_t starts = ~m.space & (m.space << 1 | after_space);
        const std::uint64_t runs = m.alnum & ~(m.alnum << 1 | after_alnum);
        after_space = m.space >> 63;
        after_alnum = m.alnum >> 63;
        std::uint64_t look = m.high;
        for (std::uint64_t r = runs; r != 0; r &= r - 1) {
            const int b = __builtin_ctzll(r);
            const std::size_t i = at + static_cast<std::size_t>(b);
            if (leads.run_may_match(t[i], i + 1 < size ? t[i + 1] : -1)) look |= std::uint64_t{1} << b;
        }
        if (next > at) look &= next - at >= 64 ? 0 : ~std::uint64_t{0} << (next - at);
        while (look != 0) {
            const int b = __builtin_ctzll(look);
            const std::uint64_t upto = b == 63 ? ~std::uint64_t{0} : (std::uint64_t{1} << (b + 1)) - 1;
            const std::size_t index = words + static_cast<std::size_t>(__builtin_popcountll(starts & upto)) - 1;
            if (index >= max_words) return;
            std::size_t begin = at + static_cast<std::size_t>(b);
            while (begin > 0 && t[begin - 1] != ' ') --begin;
            const std::size_t end = static_cast<std::size_t>(
                find_space(text.data() + at + static_cast<std::size_t>(b), text.data() + size) - text.data());
            out.push_back(WordSpan{index, begin, end});
            next = end;
            look &= end - at >= 64 ? 0 : ~std::uint64_t{0} << (end - at);
        }
        words += static_cast<std::size_t>(__builtin_popcountll(starts));
        if (words > max_words) return;  // word number max_words has begun: the rest come later
    }
}

WordSpan word_before(std::string_view text, std::size_t index, std::size_t begin, std::size_t back) {
    if (back > index) back = index;
    for (std::size_t k = 0; k < back; ++k) {
        while (begin > 0 && text[begin - 1] == ' ') --begin;  // the spaces before the word
        while (begin > 0 && text[begin - 1] != ' ') --begin;  // the word before them
    }
    const std::size_t end = static_cast<std::size_t>(
        find_space(text.data() + begin, text.data() + text.size()) - text.data());
    return WordSpan{index - back, begin, end};
}

}  // namespace notesd
