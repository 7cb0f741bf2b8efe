#include <boost/test/unit_test.hpp>

#include <random>
#include <string>
#include <vector>

#include "search/word_scan.hpp"

using namespace notesd;

BOOST_AUTO_TEST_SUITE(word_scan)

namespace {

bool same_spans(const std::vector<WordSpan>& a, const std::vector<WordSpan>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].index != b[i].index || a[i].begin != b[i].begin || a[i].end != b[i].end) return false;
    return true;
}

}  // namespace

// lead_words (64 bytes at a time) finds exactly the words the word-by-word reference finds, on
// random texts of runs of spaces, punctuation, ASCII runs, non-ASCII letters and CJK, with words
// across block boundaries and word limits that cut the text anywhere.
BOOST_AUTO_TEST_CASE(lead_words_equals_the_word_by_word_scan) {
    TermLeads leads;
    for (const char* t : {"ab", "x", "zz", "7q", "k\xC3\xA9"}) leads.add(t);
    const std::vector<std::string> pieces = {" ", "  ", "ab", "AB", "aB", "x", "Xy", "zz9", "za", "-", "(",
                                             "),", "7Q", "q7", "caf\xC3\xA9", "\xE6\x9D\xB1\xE4\xBA\xAC", "kz",
                                             std::string(70, 'm'), std::string(63, 'y') + "ab", "o"};
    std::mt19937 rng(7);
    int found = 0;
    for (int round = 0; round < 3000; ++round) {
        std::string text;
        const int n = static_cast<int>(rng() % 120);
        for (int i = 0; i < n; ++i) text += pieces[rng() % pieces.size()];
        for (std::size_t max_words : {std::size_t{4000}, std::size_t{0}, std::size_t{1},
                                      static_cast<std::size_t>(rng() % 40)}) {
            std::vector<WordSpan> fast, simple;
            lead_words(text, leads, max_words, fast);
            lead_words_simple(text, leads, max_words, simple);
            BOOST_REQUIRE_MESSAGE(same_spans(fast, simple), "text '" << text << "' max_words " << max_words);
            found += static_cast<int>(simple.size());
            for (const WordSpan& w : simple) {
                for (std::size_t back = 0; back < 5; ++back) {
                    // the reference: every word of the text, in order
                    std::vector<WordSpan> all;
                    for (std::size_t i = 0; i < text.size();) {
                        if (text[i] == ' ') {
                            ++i;
                            continue;
                        }
                        const std::size_t j = std::min(text.find(' ', i), text.size());
                        all.push_back(WordSpan{all.size(), i, j});
                        i = j;
                    }
                    const WordSpan want = all[w.index - std::min(back, w.index)];
                    const WordSpan got = word_before(text, w.index, w.begin, back);
                    BOOST_REQUIRE(got.index == want.index && got.begin == want.begin && got.end == want.end);
                }
                break;  // one word per text is enough for word_before
            }
        }
    }
    BOOST_CHECK_GT(found, 10000);  // the texts do hold words to find
}

BOOST_AUTO_TEST_SUITE_END()
