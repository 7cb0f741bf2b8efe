#include <boost/test/unit_test.hpp>

#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "index/positions.hpp"

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

// Against a plain reference (a map of each term's two position lists) on random fields with
// repeated terms, prefixes of each other (some sharing their first eight bytes), and more distinct one-byte terms than the lookup table
// first holds, so that it grows.
BOOST_AUTO_TEST_CASE(equals_a_map_of_each_terms_positions) {
    std::mt19937 rng(7);
    std::vector<std::string> words;
    for (int c = 0x21; c <= 0xff; ++c) words.push_back(std::string(1, static_cast<char>(c)));
    for (const char* w : {"run", "runs", "runner", "r", "ru", "zeta", "alpha", "alphabet", "alphabetical", "alphabetic"}) words.push_back(w);
    for (int round = 0; round < 200; ++round) {
        std::string field[2];
        std::map<std::string, std::pair<std::vector<int>, std::vector<int>>> want;
        for (int f = 0; f < 2; ++f) {
            // Round 0's title: each one-byte term once (223 distinct in 445 bytes).
            const int n = round == 0 ? (f == 0 ? 223 : 0) : static_cast<int>(rng() % (round < 100 ? 12 : 600));
            for (int i = 0; i < n; ++i) {
                const std::string& w = round == 0 ? words[(i * 101) % 223] : words[rng() % (round % 2 ? words.size() : 12)];
                field[f] += (i ? " " : "") + w;
                (f == 0 ? want[w].first : want[w].second).push_back(i);
            }
        }
        const std::vector<TermCount> got = detail::count_terms(field[0], field[1]);
        BOOST_REQUIRE_EQUAL(got.size(), want.size());
        std::size_t i = 0;
        for (const auto& [term, at] : want) {
            BOOST_CHECK_EQUAL(got[i].term, term);
            BOOST_CHECK_EQUAL(got[i].title_tf, static_cast<long long>(at.first.size()));
            BOOST_CHECK_EQUAL(got[i].body_tf, static_cast<long long>(at.second.size()));
            BOOST_CHECK_EQUAL(got[i].pos, encode_positions(at.first, at.second));
            ++i;
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
