#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "store/soci_stmt.hpp"

using namespace notesd;
using detail::TermCount;

BOOST_AUTO_TEST_SUITE(term_counts)

// Distinct terms in bytewise order, each with its title and body counts and both fields'
// positions (positions.hpp's text: gaps, the title's before ';').
BOOST_AUTO_TEST_CASE(counts_each_distinct_term_of_both_fields_in_bytewise_order) {
    const std::vector<TermCount> got = detail::count_terms("b a b", "a c a b a");
    BOOST_REQUIRE_EQUAL(got.size(), 3u);
    BOOST_CHECK_EQUAL(got[0].term, "a");
    BOOST_CHECK_EQUAL(got[0].title_tf, 1);
    BOOST_CHECK_EQUAL(got[0].body_tf, 3);
    BOOST_CHECK_EQUAL(got[0].pos, "1;0,2,2");
    BOOST_CHECK_EQUAL(got[1].term, "b");
    BOOST_CHECK_EQUAL(got[1].title_tf, 2);
    BOOST_CHECK_EQUAL(got[1].body_tf, 1);
    BOOST_CHECK_EQUAL(got[1].pos, "0,2;3");
    BOOST_CHECK_EQUAL(got[2].term, "c");
    BOOST_CHECK_EQUAL(got[2].title_tf, 0);
    BOOST_CHECK_EQUAL(got[2].body_tf, 1);
    BOOST_CHECK_EQUAL(got[2].pos, ";1");
    BOOST_CHECK(detail::count_terms("", "").empty());
    // A prefix sorts before its extensions; a term in one field only has no positions in the other.
    const std::vector<TermCount> p = detail::count_terms("ab", "a abc");
    BOOST_REQUIRE_EQUAL(p.size(), 3u);
    BOOST_CHECK_EQUAL(p[0].term + p[1].term + p[2].term, "aababc");
    BOOST_CHECK_EQUAL(p[1].pos, "0;");
}

BOOST_AUTO_TEST_SUITE_END()
