#include "index/text.hpp"

#include <libstemmer.h>
#include <utf8proc.h>

#include <algorithm>
#include <memory>
#include <cstdint>
#include <cstring>
#include <vector>

namespace notesd {
namespace detail {
namespace {

using Cp = utf8proc_int32_t;

char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool all_ascii(std::string_view text) {
    return std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

// Replaces every byte that is not part of a well-formed sequence with a space, so utf8proc
// (which rejects the whole string on one bad byte) always gets valid input.
std::string sanitize_utf8(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    auto p = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
    utf8proc_ssize_t left = static_cast<utf8proc_ssize_t>(text.size());
    while (left > 0) {
        Cp cp = 0;
        utf8proc_ssize_t n = utf8proc_iterate(p, left, &cp);
        if (n <= 0 || cp < 0) {
            out.push_back(' ');
            n = 1;
        } else {
            out.append(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
        }
        p += n;
        left -= n;
    }
    return out;
}

// The accents we fold away: combining diacritics used over Latin, Greek and Cyrillic, Hebrew
// points and Arabic harakat. UTF8PROC_STRIPMARK would also strip every Mn/Mc mark, which merges
// distinct words in other scripts (Japanese が becomes か, Hindi vowel signs vanish).
bool is_foldable_mark(Cp c) {
    return (c >= 0x0300 && c <= 0x036F) || (c >= 0x1AB0 && c <= 0x1AFF) ||
           (c >= 0x1DC0 && c <= 0x1DFF) || (c >= 0x20D0 && c <= 0x20FF) ||
           (c >= 0xFE20 && c <= 0xFE2F) || (c >= 0x0591 && c <= 0x05C7) ||
           (c >= 0x064B && c <= 0x065F) || c == 0x0670;
}

// NFKD + case fold (reordered), strip accents, then canonical composition: NFKC-casefold
// without accents. Composition matters for Hangul jamo and kana voicing marks.
std::vector<Cp> fold_codepoints(std::string_view text) {
    // All ASCII (most notes): the folding below changes only A-Z, so it is skipped (the unit
    // test ascii_folds_the_same_on_both_paths holds the two paths to one answer).
    if (all_ascii(text)) {
        std::vector<Cp> out(text.size());
        for (std::size_t i = 0; i < text.size(); ++i) out[i] = ascii_lower(text[i]);
        return out;
    }
    const std::string clean = sanitize_utf8(text);
    const auto opts = static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPAT |
                                                     UTF8PROC_DECOMPOSE | UTF8PROC_CASEFOLD |
                                                     UTF8PROC_IGNORE);
    auto src = reinterpret_cast<const utf8proc_uint8_t*>(clean.data());
    const auto len = static_cast<utf8proc_ssize_t>(clean.size());
    std::vector<Cp> buf(clean.size() + 16);
    utf8proc_ssize_t n = utf8proc_decompose(src, len, buf.data(), buf.size(), opts);
    if (n > static_cast<utf8proc_ssize_t>(buf.size())) {
        buf.resize(static_cast<std::size_t>(n));
        n = utf8proc_decompose(src, len, buf.data(), buf.size(), opts);
    }
    if (n < 0) return {};  // cannot happen on sanitized input; an empty analysis is the safe answer
    std::size_t kept = 0;
    for (utf8proc_ssize_t i = 0; i < n; ++i)
        if (!is_foldable_mark(buf[i])) buf[kept++] = buf[i];
    const auto compose = static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE);
    utf8proc_ssize_t m = utf8proc_normalize_utf32(buf.data(), static_cast<utf8proc_ssize_t>(kept), compose);
    buf.resize(m < 0 ? kept : static_cast<std::size_t>(m));
    return buf;
}

// Scripts written without spaces between words (and Hangul, whose particles attach to nouns):
// indexed as overlapping bigrams so any substring of two or more characters is found.
bool is_cjk(Cp c) {
    return (c >= 0x1100 && c <= 0x11FF) ||   // Hangul jamo
           (c >= 0x2E80 && c <= 0x2FDF) ||   // CJK radicals, Kangxi
           (c >= 0x3005 && c <= 0x3007) ||   // 々 〆 〇
           (c >= 0x3021 && c <= 0x3029) || (c >= 0x3031 && c <= 0x3035) ||
           (c >= 0x3038 && c <= 0x303C) ||
           (c >= 0x3040 && c <= 0x30FF) ||   // Hiragana, Katakana (with ー)
           (c >= 0x3130 && c <= 0x318F) ||   // Hangul compatibility jamo
           (c >= 0x31F0 && c <= 0x31FF) ||   // Katakana extensions
           (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) ||
           (c >= 0xA960 && c <= 0xA97F) || (c >= 0xAC00 && c <= 0xD7FF) ||  // Hangul
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x20000 && c <= 0x3134F);
}

enum class CharClass { Sep, Word, Cjk };

bool is_ascii_alnum(Cp c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z');
}

CharClass classify(Cp c) {
    if (c < 0x80) return is_ascii_alnum(c) ? CharClass::Word : CharClass::Sep;  // fast path for ASCII
    if (is_cjk(c)) return CharClass::Cjk;
    switch (utf8proc_category(c)) {
        case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
        case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO:
        case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME:
        case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
            return CharClass::Word;
        default:
            return CharClass::Sep;
    }
}

void append_utf8(std::string& out, const Cp* cps, std::size_t n) {
    utf8proc_uint8_t tmp[4];
    for (std::size_t i = 0; i < n; ++i) {
        utf8proc_ssize_t k = utf8proc_encode_char(cps[i], tmp);
        out.append(reinterpret_cast<const char*>(tmp), static_cast<std::size_t>(k));
    }
}

// The stems of recent words, per thread: text repeats its words, and Snowball cost about a
// quarter of a note's analysis. Direct-mapped, one 64-byte slot per word with the word and its
// stem inline, so a look-up reads one cache line and allocates nothing; a newer word takes its
// slot's place. (A std::unordered_map<std::string, std::string> of 32,768 words spent 18% of an
// analysis walking its buckets, more than the stemming it saved.)
class StemCache {
public:
    static constexpr std::size_t kSlots = 1 << 15;  // 2 MB
    static constexpr std::size_t kMaxChars = 29;    // longer words and stems are not kept

    static std::uint64_t hash(std::string_view w) {  // FNV-1a
        std::uint64_t h = 14695981039346656037ULL;
        for (char c : w) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
        return h;
    }
    /// Appends the word's stem to out when the word is cached.
    bool append(std::string_view w, std::uint64_t h, std::string& out) const {
        const Slot& s = slots_[h & (kSlots - 1)];
        if (s.tag != static_cast<std::uint32_t>(h >> 32) || s.word_len != w.size() ||
            std::memcmp(s.word, w.data(), w.size()) != 0)
            return false;
        out.append(s.stem, s.stem_len);
        return true;
    }
    void put(std::string_view w, std::uint64_t h, std::string_view stem) {
        if (w.size() > kMaxChars || stem.size() > kMaxChars) return;
        Slot& s = slots_[h & (kSlots - 1)];
        s.tag = static_cast<std::uint32_t>(h >> 32);
        s.word_len = static_cast<std::uint8_t>(w.size());
        s.stem_len = static_cast<std::uint8_t>(stem.size());
        std::memcpy(s.word, w.data(), w.size());
        std::memcpy(s.stem, stem.data(), stem.size());
    }

private:
    struct alignas(64) Slot {
        std::uint32_t tag = 0;
        std::uint8_t word_len = 0;  // 0: empty (a stemmed word has at least 3 letters)
        std::uint8_t stem_len = 0;
        char word[kMaxChars];
        char stem[kMaxChars];
    };
    static_assert(sizeof(Slot) == 64, "a slot is one cache line");
    std::vector<Slot> slots_ = std::vector<Slot>(kSlots);
};

struct StemmerDeleter {
    void operator()(sb_stemmer* s) const { sb_stemmer_delete(s); }
};

// Snowball stemmers keep state per instance: one per thread.
sb_stemmer* english_stemmer() {
    thread_local std::unique_ptr<sb_stemmer, StemmerDeleter> s(sb_stemmer_new("english", nullptr));
    return s.get();
}

bool stem_eligible(std::string_view w) {
    if (w.size() < 3) return false;
    for (char ch : w)
        if (ch < 'a' || ch > 'z') return false;
    return true;
}

// Appends the stem of a folded word to out (the word itself when it is not eligible).
void append_stem(std::string_view w, std::string& out) {
    if (!stem_eligible(w)) {
        out.append(w);
        return;
    }
    thread_local StemCache cache;
    const std::uint64_t h = StemCache::hash(w);
    if (cache.append(w, h, out)) return;
    sb_stemmer* st = english_stemmer();
    const sb_symbol* r = st ? sb_stemmer_stem(st, reinterpret_cast<const sb_symbol*>(w.data()),
                                              static_cast<int>(w.size()))
                            : nullptr;
    if (!r) {  // out of memory inside Snowball: fall back to the word itself
        out.append(w);
        return;
    }
    const std::string_view stem(reinterpret_cast<const char*>(r), static_cast<std::size_t>(sb_stemmer_length(st)));
    cache.put(w, h, stem);
    out.append(stem);
}

// index_field of ASCII text (most notes) without analyze()'s code points and tokens: the
// same words (runs of letters and digits), lower-cased, cut at kMaxTermChars and stemmed,
// written straight into the term string. text_tests' index_field_takes_the_same_terms_on_both_paths
// holds the two paths to one answer.
void index_ascii_field(std::string_view text, const AnalyzeOptions& opts, FieldIndex& f) {
    f.terms.reserve(text.size());
    char word[kMaxTermChars];
    std::size_t i = 0;
    const std::size_t n = text.size();
    while (i < n) {
        if (!is_ascii_alnum(text[i])) {
            ++i;
            continue;
        }
        std::size_t len = 0;
        for (; i < n && is_ascii_alnum(text[i]); ++i)
            if (len < kMaxTermChars) word[len++] = ascii_lower(text[i]);
        if (!f.terms.empty()) f.terms.push_back(' ');
        if (opts.stem)
            append_stem(std::string_view(word, len), f.terms);
        else
            f.terms.append(word, len);
        ++f.length;
    }
}

void emit_word(std::vector<Token>& out, const Cp* cps, std::size_t n, const AnalyzeOptions& opts) {
    Token t;
    append_utf8(t.surface, cps, n < kMaxTermChars ? n : kMaxTermChars);
    t.term = opts.stem ? stem_word(t.surface) : t.surface;
    t.pos = static_cast<std::uint32_t>(out.size());
    t.kind = TokenKind::Word;
    out.push_back(std::move(t));
}

void emit_cjk(std::vector<Token>& out, const Cp* cps, std::size_t n) {
    const std::size_t count = n == 1 ? 1 : n - 1;
    for (std::size_t i = 0; i < count; ++i) {
        Token t;
        append_utf8(t.term, cps + i, n == 1 ? 1 : 2);
        t.surface = t.term;
        t.pos = static_cast<std::uint32_t>(out.size());
        t.kind = n == 1 ? TokenKind::CjkSingle : TokenKind::CjkBigram;
        t.joined = i > 0;
        out.push_back(std::move(t));
    }
}

}  // namespace
}  // namespace detail

std::string stem_word(std::string_view w) {
    std::string stem;
    detail::append_stem(w, stem);
    return stem;
}

std::string fold_text(std::string_view text) {
    const auto cps = detail::fold_codepoints(text);
    std::string out;
    out.reserve(cps.size());
    detail::append_utf8(out, cps.data(), cps.size());
    return out;
}

std::vector<Token> analyze(std::string_view text, const AnalyzeOptions& opts) {
    using detail::CharClass;
    const auto cps = detail::fold_codepoints(text);
    std::vector<Token> out;
    std::size_t i = 0;
    while (i < cps.size()) {
        const CharClass cls = detail::classify(cps[i]);
        if (cls == CharClass::Sep) {
            ++i;
            continue;
        }
        std::size_t j = i + 1;
        while (j < cps.size() && detail::classify(cps[j]) == cls) ++j;
        if (cls == CharClass::Word)
            detail::emit_word(out, cps.data() + i, j - i, opts);
        else
            detail::emit_cjk(out, cps.data() + i, j - i);
        i = j;
    }
    return out;
}

FieldIndex index_field(std::string_view text, const AnalyzeOptions& opts) {
    FieldIndex f;
    if (detail::all_ascii(text)) {
        detail::index_ascii_field(text, opts, f);
        return f;
    }
    const auto tokens = analyze(text, opts);
    for (const auto& t : tokens) {
        if (!f.terms.empty()) f.terms.push_back(' ');
        f.terms += t.term;
    }
    f.length = static_cast<std::uint32_t>(tokens.size());
    return f;
}

std::vector<std::string_view> split_terms(std::string_view stored) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < stored.size()) {
        if (stored[i] == ' ') {
            ++i;
            continue;
        }
        std::size_t j = stored.find(' ', i);
        if (j == std::string_view::npos) j = stored.size();
        out.push_back(stored.substr(i, j - i));
        i = j;
    }
    return out;
}

namespace {

// What markdown's plain text separates words with (Unicode spaces are left as they are).
bool is_ascii_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

}  // namespace

std::string collapse_whitespace(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    bool space = false;
    for (char c : s) {
        if (is_ascii_space(c)) {
            space = !out.empty();
            continue;
        }
        if (space) out += ' ';
        space = false;
        out += c;
    }
    return out;
}

std::string truncate_text(std::string_view s, std::size_t max_chars) {
    if (max_chars == 0) return std::string();
    // Byte offset of each code point start (ASCII needs no decoding).
    std::vector<std::size_t> starts;
    starts.reserve(std::min(max_chars + 1, s.size()));
    std::size_t pos = 0;
    while (pos < s.size() && starts.size() <= max_chars) {
        starts.push_back(pos);
        if (static_cast<unsigned char>(s[pos]) < 0x80) {
            ++pos;
            continue;
        }
        utf8proc_int32_t cp = 0;
        auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + pos),
                                  static_cast<utf8proc_ssize_t>(s.size() - pos), &cp);
        if (n <= 0) n = 1;  // callers pass valid UTF-8; never loop forever
        pos += static_cast<std::size_t>(n);
    }
    if (starts.size() <= max_chars) return std::string(s);  // fits (loop stopped at the end)
    std::size_t keep = max_chars - 1;                         // room for the ellipsis
    std::size_t cut = starts[keep];
    if (s[cut] != ' ') {
        std::size_t space = s.rfind(' ', cut);
        if (space != std::string_view::npos && space >= starts[keep / 2]) {
            cut = space;
        } else {  // one long word (or text without spaces): cut at the last grapheme boundary
            utf8proc_int32_t prev = -1, state = 0;
            std::size_t last = 0;
            for (std::size_t i = 0; i <= keep; ++i) {
                utf8proc_int32_t cp = 0;
                const auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + starts[i]),
                                                static_cast<utf8proc_ssize_t>(s.size() - starts[i]), &cp);
                if (n <= 0) cp = 0xFFFD;
                if (prev < 0 || utf8proc_grapheme_break_stateful(prev, cp, &state)) last = i;
                prev = cp;
            }
            cut = starts[last];
        }
    }
    std::string out(s.substr(0, cut));
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\xE2\x80\xA6";
}

}  // namespace notesd
