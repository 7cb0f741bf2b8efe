#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "search/query.hpp"

using namespace notesd;

namespace {
using V = std::vector<std::string>;
}  // namespace

BOOST_AUTO_TEST_SUITE(query)

BOOST_AUTO_TEST_CASE(parses_words_phrases_and_last_prefix) {
    const ParsedQuery q = parse_query("Running \"File Systems\" kuber");
    BOOST_REQUIRE_EQUAL(q.clauses.size(), 3u);
    BOOST_CHECK(q.clauses[0].kind == ClauseKind::Term);
    BOOST_CHECK(q.clauses[0].terms == V{"run"});
    BOOST_CHECK(q.clauses[1].kind == ClauseKind::Phrase);
    BOOST_CHECK(q.clauses[1].terms == (V{"file", "system"}));
    BOOST_CHECK(q.clauses[2].kind == ClauseKind::Prefix);
    BOOST_CHECK_EQUAL(q.clauses[2].prefix, "kuber");
    BOOST_CHECK_EQUAL(q.prefix(), "kuber");
    BOOST_CHECK(q.lookup_terms() == (V{"file", "kuber", "run", "system"}));
}

BOOST_AUTO_TEST_CASE(unclosed_quote_runs_to_the_end_and_phrase_is_never_prefix) {
    const ParsedQuery q = parse_query("alpha \u201Cbeta gamma");
    BOOST_REQUIRE_EQUAL(q.clauses.size(), 2u);
    BOOST_CHECK(q.clauses[1].kind == ClauseKind::Phrase);
    BOOST_CHECK(q.prefix().empty());
    BOOST_CHECK(parse_query("\"one\"").clauses[0].kind == ClauseKind::Term);
}

BOOST_AUTO_TEST_CASE(canonical_form_ignores_spelling_noise) {
    BOOST_CHECK_EQUAL(parse_query("Café,  KUBER").canonical(), parse_query("cafe kuber").canonical());
    BOOST_CHECK_NE(parse_query("\"a b\"").canonical(), parse_query("a b").canonical());
}

BOOST_AUTO_TEST_CASE(long_queries_are_capped) {
    std::string q;
    for (int i = 0; i < 200; ++i) q += "w" + std::to_string(i) + " ";
    const ParsedQuery p = parse_query(q);
    std::size_t main = 0;
    for (const auto& c : p.clauses) main += c.kind != ClauseKind::Proximity;
    BOOST_CHECK_EQUAL(main, kMaxQueryClauses);
}

BOOST_AUTO_TEST_SUITE_END()
