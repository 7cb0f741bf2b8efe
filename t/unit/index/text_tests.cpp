#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "index/text.hpp"

using namespace notesd;

namespace {

std::vector<std::string> terms(std::string_view text, AnalyzeOptions opts = {}) {
    std::vector<std::string> out;
    for (const auto& t : analyze(text, opts)) out.push_back(t.term);
    return out;
}

using V = std::vector<std::string>;

}  // namespace

BOOST_AUTO_TEST_SUITE(text)

BOOST_AUTO_TEST_CASE(folds_case_accents_and_width) {
    BOOST_CHECK(terms("Café") == terms("cafe"));
    BOOST_CHECK(terms("CAFÉ") == V{"cafe"});
    BOOST_CHECK(terms("ＡＢＣ") == V{"abc"});
    BOOST_CHECK_EQUAL(fold_text("Straße"), "strasse");
    BOOST_CHECK_EQUAL(fold_text("ﬁle"), "file");                // ligature (NFKC)
    BOOST_CHECK_EQUAL(fold_text("ΣΊΣΥΦΟΣ"), fold_text("σισυφος"));  // final sigma, tonos
    BOOST_CHECK_EQUAL(fold_text("naïve \uFEFFx"), "naive x");       // BOM is default-ignorable
}

// Every ASCII character folds to itself, A-Z to a-z, whether the text is all ASCII (the fast
// path) or not (utf8proc's full folding, which the appended "É" forces).
BOOST_AUTO_TEST_CASE(ascii_folds_the_same_on_both_paths) {
    std::string all;
    for (int c = 0; c < 128; ++c) all.push_back(static_cast<char>(c));
    std::string lower = all;
    for (char& c : lower)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    BOOST_CHECK(fold_text(all) == lower);
    BOOST_CHECK(fold_text(all + "\xC3\x89") == lower + "e");
    for (const std::string& s : {std::string("Hello, World! 42 x_y-z"), std::string("\t\nA\x7f\x01b")}) {
        BOOST_CHECK(fold_text(s + "\xC3\x89") == fold_text(s) + "e");
        BOOST_CHECK(terms(s + " \xC3\x89t\xC3\xA9") == [&] { V v = terms(s); v.push_back("ete"); return v; }());
    }
}

// index_field of all-ASCII text skips the code points and tokens of analyze(); a non-ASCII word
// appended sends the same text through utf8proc's folding and analyze(), which must give the
// same terms (random text: case, digits, punctuation, control bytes, words longer than
// kMaxTermChars, stemmed or not).
BOOST_AUTO_TEST_CASE(index_field_takes_the_same_terms_on_both_paths) {
    std::uint32_t seed = 12345;
    auto next = [&seed](std::uint32_t n) {
        seed = seed * 1664525u + 1013904223u;
        return (seed >> 8) % n;
    };
    const std::string seps = " \t\n.,;:!?-_'\"()/\x01\x7f";
    const std::vector<std::string> words = {"Running", "runners", "RAN", "easily", "generalizations",
                                            "connection", "x", "ab", "42", "v2", "caresses", "ponies"};
    int fast_paths = 0;
    for (int round = 0; round < 3000; ++round) {
        std::string s;
        const std::uint32_t parts = next(12);
        for (std::uint32_t p = 0; p < parts; ++p) {
            if (next(3) == 0) {
                s += words[next(static_cast<std::uint32_t>(words.size()))];
            } else {
                const std::uint32_t len = 1 + next(next(5) == 0 ? 70 : 9);
                for (std::uint32_t i = 0; i < len; ++i) {
                    const std::uint32_t k = next(36 + 26);
                    s.push_back(static_cast<char>(k < 26 ? 'a' + k : k < 36 ? '0' + (k - 26) : 'A' + (k - 36)));
                }
            }
            s += seps[next(static_cast<std::uint32_t>(seps.size()))];
        }
        for (const bool stem : {true, false}) {
            const FieldIndex fast = index_field(s, AnalyzeOptions{stem});
            const FieldIndex slow = index_field(s + " \xC3\xA9", AnalyzeOptions{stem});
            BOOST_TEST_CONTEXT("text [" << s << "] stem " << stem) {
                BOOST_CHECK_EQUAL(slow.length, fast.length + 1);
                BOOST_CHECK_EQUAL(slow.terms, fast.length ? fast.terms + " e" : std::string("e"));
                std::string joined;
                for (const auto& t : analyze(s, AnalyzeOptions{stem})) joined += (joined.empty() ? "" : " ") + t.term;
                BOOST_CHECK_EQUAL(fast.terms, joined);
            }
            fast_paths += fast.length > 0;
        }
    }
    BOOST_CHECK_GT(fast_paths, 4000);
    BOOST_CHECK_EQUAL(index_field("Connections CONNECTED " + std::string(60, 'Z') + " 7").terms,
                      "connect connect " + std::string(48, 'z') + " 7");
    // A word is cut before it is stemmed, and whether it may be stemmed is decided on the cut
    // word: 45 a's and "ingx" cut to "...aing" stem to 45 a's (stemmed first: "...aing"); 45
    // a's and "ing1" cut to letters only, which stem (decided before the cut: not stemmed).
    for (const std::string& word : {std::string(45, 'a') + "ingx", std::string(45, 'a') + "ing1"}) {
        std::string slow;
        for (const auto& t : analyze(word + " \xC3\xA9")) slow += (slow.empty() ? "" : " ") + t.term;
        BOOST_TEST_CONTEXT("word " << word) {
            BOOST_CHECK_EQUAL(index_field(word).terms, std::string(45, 'a'));
            BOOST_CHECK_EQUAL(slow, std::string(45, 'a') + " e");
        }
    }
    BOOST_CHECK_EQUAL(index_field(std::string("runs\0running\0", 13)).terms, "run run");
}

BOOST_AUTO_TEST_CASE(keeps_marks_that_distinguish_words) {
    // Stripping every mark would merge が with か and erase Hindi vowel signs.
    BOOST_CHECK_NE(fold_text("が"), fold_text("か"));
    BOOST_CHECK_EQUAL(fold_text("ｶﾞ"), "ガ");  // halfwidth kana compose to the fullwidth letter
    BOOST_CHECK_EQUAL(terms("हिंदी").size(), 1u);
    BOOST_CHECK_NE(fold_text("हिंदी"), fold_text("हद"));
}

BOOST_AUTO_TEST_CASE(splits_words_on_unicode_categories) {
    BOOST_CHECK(terms("file-system: v2.0 (beta)!", AnalyzeOptions{false}) ==
                (V{"file", "system", "v2", "0", "beta"}));
    BOOST_CHECK(terms("😀🎉 ... *** -- :: )(").empty());
    BOOST_CHECK(terms("").empty());
    BOOST_CHECK(terms("co\u00ADoperate", AnalyzeOptions{false}) == V{"cooperate"});  // soft hyphen
    BOOST_CHECK(terms("Ünïcödé١٢٣", AnalyzeOptions{false}) == V{"unicode١٢٣"});
}

BOOST_AUTO_TEST_CASE(positions_are_consecutive_token_indexes) {
    const auto toks = analyze("one, two; 東京都 three");
    BOOST_REQUIRE_EQUAL(toks.size(), 5u);
    for (std::size_t i = 0; i < toks.size(); ++i) BOOST_CHECK_EQUAL(toks[i].pos, i);
    BOOST_CHECK(!toks[2].joined);
    BOOST_CHECK(toks[3].joined);
    BOOST_CHECK(!toks[4].joined);
}

BOOST_AUTO_TEST_CASE(cjk_runs_become_overlapping_bigrams) {
    BOOST_CHECK(terms("東京都庁") == (V{"東京", "京都", "都庁"}));
    BOOST_CHECK(terms("日") == V{"日"});
    BOOST_CHECK(terms("서울에서") == (V{"서울", "울에", "에서"}));
    BOOST_CHECK(terms("カタカナ") == (V{"カタ", "タカ", "カナ"}));
    const auto toks = analyze("東京 abc");
    BOOST_REQUIRE_EQUAL(toks.size(), 2u);
    BOOST_CHECK(toks[0].kind == TokenKind::CjkBigram);
    BOOST_CHECK(toks[1].kind == TokenKind::Word);
    BOOST_CHECK(analyze("日")[0].kind == TokenKind::CjkSingle);
}

BOOST_AUTO_TEST_CASE(stems_english_words_only) {
    BOOST_CHECK(terms("running systems kubernetes") == (V{"run", "system", "kubernet"}));
    BOOST_CHECK_EQUAL(analyze("Running")[0].surface, "running");
    BOOST_CHECK(terms("running", AnalyzeOptions{false}) == V{"running"});
    BOOST_CHECK(terms("x86 café") == (V{"x86", "cafe"}));
    BOOST_CHECK_EQUAL(stem_word("flows"), "flow");
    BOOST_CHECK_EQUAL(stem_word("ab"), "ab");
}

BOOST_AUTO_TEST_CASE(invalid_utf8_never_throws) {
    const std::string bad = std::string("ok\xff\xfe") + "fine\xc3" + "\x28" + "end";
    std::vector<Token> toks;
    BOOST_CHECK_NO_THROW(toks = analyze(bad, AnalyzeOptions{false}));
    BOOST_CHECK(terms(bad, AnalyzeOptions{false}) == (V{"ok", "fine", "end"}));
}

BOOST_AUTO_TEST_CASE(long_words_are_cut) {
    const std::string word(200, 'x');
    const auto toks = analyze(word, AnalyzeOptions{false});
    BOOST_REQUIRE_EQUAL(toks.size(), 1u);
    BOOST_CHECK_EQUAL(toks[0].term.size(), kMaxTermChars);
}

BOOST_AUTO_TEST_CASE(stored_form_round_trips) {
    const FieldIndex f = index_field("The quick 東京都 foxes");
    BOOST_CHECK_EQUAL(f.terms, "the quick 東京 京都 fox");
    BOOST_CHECK_EQUAL(f.length, 5u);
    const auto back = split_terms(f.terms);
    BOOST_REQUIRE_EQUAL(back.size(), 5u);
    BOOST_CHECK_EQUAL(back[2], "東京");
    BOOST_CHECK(split_terms("").empty());
    BOOST_CHECK_EQUAL(index_field("!!!").length, 0u);
}

BOOST_AUTO_TEST_CASE(truncate_text_edge_cases) {
    BOOST_CHECK_EQUAL(truncate_text("abc", 3), "abc");
    BOOST_CHECK_EQUAL(truncate_text("abcd", 3), "ab\xE2\x80\xA6");
    BOOST_CHECK_EQUAL(truncate_text("ab cd ef", 6), "ab cd\xE2\x80\xA6");
    BOOST_CHECK_EQUAL(truncate_text("ab cdef", 6), "ab\xE2\x80\xA6");
    BOOST_CHECK_EQUAL(collapse_whitespace("  a \t\n b  "), "a b");
}

BOOST_AUTO_TEST_SUITE_END()
