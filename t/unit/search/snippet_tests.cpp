#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "search/snippet.hpp"

using namespace notesd;

BOOST_AUTO_TEST_SUITE(snippet)

// The passage around the window of 24 words with the most distinct query terms (then the most
// matches, then the earliest), a few words of context before it, ellipsis when cut.
BOOST_AUTO_TEST_CASE(snippet_picks_the_densest_window) {
    std::string filler;
    for (int i = 0; i < 40; ++i) filler += "lorem ";
    const std::string text = "alpha at the start " + filler + "then beta and gamma and alpha together " +
                             filler + "gamma gamma gamma alone";
    const std::string s = query_snippet(text, parse_query("alpha beta gamma"));
    BOOST_CHECK_EQUAL(s.rfind("\xE2\x80\xA6lorem lorem then beta and gamma and alpha together", 0), 0u);
    // one distinct term everywhere: the earliest window with the most matches
    const std::string g = query_snippet(text, parse_query("gamma"));
    BOOST_CHECK_EQUAL(g.rfind("\xE2\x80\xA6lorem lorem lorem gamma gamma gamma alone", 0), 0u);
    // the last query word counts as a prefix
    BOOST_CHECK_EQUAL(query_snippet("nothing here but together", parse_query("toge")).find("together") !=
                          std::string::npos, true);
    BOOST_CHECK_EQUAL(query_snippet(text, parse_query("zzz")), "");
    BOOST_CHECK_EQUAL(query_snippet("alpha first", parse_query("alpha")), "alpha first");
}

// A stopword weighs little in the ranking, and in the snippet a window with a real query word
// beats one with more stopwords; a query of stopwords alone still finds them; quoted, they count.
BOOST_AUTO_TEST_CASE(snippet_prefers_query_words_to_stopwords) {
    std::string filler;
    for (int i = 0; i < 40; ++i) filler += "lorem ";
    const std::string text = filler + "the cat and the dog and the end " + filler + "we are meeting today " + filler;
    BOOST_CHECK(query_snippet(text, parse_query("the meet")).find("meeting today") != std::string::npos);
    BOOST_CHECK(query_snippet(text, parse_query("the and")).find("the cat and the dog") != std::string::npos);
    BOOST_CHECK(query_snippet(text, parse_query("\"the cat\" meeting")).find("the cat") != std::string::npos);
}

// Words are only analysed when one of their alphanumeric runs starts like a query term: every
// shape analysis can match must still be found (case, stems, runs inside punctuation, digits,
// one-letter terms, prefixes, folded non-ASCII words).
BOOST_AUTO_TEST_CASE(snippet_finds_every_word_shape_analysis_matches) {
    std::string filler;
    for (int i = 0; i < 40; ++i) filler += "lorem ";
    const auto found = [&](const std::string& word, const std::string& q) {
        const std::string s = query_snippet(filler + word + " " + filler, parse_query(q));
        return s.find(word) != std::string::npos;
    };
    BOOST_CHECK(found("foo-bar", "bar"));
    BOOST_CHECK(found("foo-bar", "foo"));
    BOOST_CHECK(found("RUNNING", "runs"));
    BOOST_CHECK(found("(Kubernetes),", "kube"));
    BOOST_CHECK(found("v2/x", "x"));
    BOOST_CHECK(found("[2026]", "2026"));
    BOOST_CHECK(found("Café", "cafe"));
    BOOST_CHECK(found("ＡＢＣ", "abc"));
    BOOST_CHECK(found("cries", "cry"));
    BOOST_CHECK(!found("barn", "bar baz"));
    BOOST_CHECK(!found("ab-cd", "ac"));
}

BOOST_AUTO_TEST_SUITE_END()
