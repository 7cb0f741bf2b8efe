// The pending entry blobs (index/pending_terms.hpp): round trips, and malformed data refused.
#include <boost/test/unit_test.hpp>

#include "index/pending_terms.hpp"

using namespace notesd;

BOOST_AUTO_TEST_SUITE(pending_terms)

BOOST_AUTO_TEST_CASE(terms_round_trip) {
    const std::vector<SegmentTerm> terms = {{"a", 0, 1, "x"}, {"café", 3, 200, std::string("\0\1", 2)},
                                            {"東京", 1LL << 30, 0, ""}};
    std::vector<SegmentTerm> got;
    BOOST_REQUIRE(decode_pending_terms(encode_pending_terms(terms), got));
    BOOST_REQUIRE_EQUAL(got.size(), terms.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        BOOST_CHECK_EQUAL(got[i].term, terms[i].term);
        BOOST_CHECK_EQUAL(got[i].title_tf, terms[i].title_tf);
        BOOST_CHECK_EQUAL(got[i].body_tf, terms[i].body_tf);
        BOOST_CHECK(got[i].pos == terms[i].pos);
    }
    BOOST_CHECK(encode_pending_terms({}).empty());
    BOOST_CHECK(decode_pending_terms("", got) && got.empty());
}

BOOST_AUTO_TEST_CASE(names_round_trip) {
    const std::vector<std::string> names = {"", "a", "ab", "東"};
    std::vector<std::string> got;
    BOOST_REQUIRE(decode_term_names(encode_term_names(names), got));
    BOOST_CHECK(got == names);
    BOOST_CHECK(decode_term_names("", got) && got.empty());
}

BOOST_AUTO_TEST_CASE(malformed_is_refused) {
    std::vector<SegmentTerm> terms;
    std::vector<std::string> names;
    const std::string good = encode_pending_terms({{"a", 1, 2, "p"}, {"b", 0, 1, ""}});
    for (std::size_t cut = 1; cut < good.size(); ++cut)
        BOOST_CHECK_MESSAGE(!decode_pending_terms(good.substr(0, cut), terms), "cut at " << cut);
    BOOST_CHECK(!decode_pending_terms("N", terms));  // another format
    BOOST_CHECK(!decode_pending_terms(encode_pending_terms({{"b", 1, 1, ""}, {"a", 1, 1, ""}}), terms));
    BOOST_CHECK(!decode_pending_terms(encode_pending_terms({{"a", 1, 1, ""}, {"a", 1, 1, ""}}), terms));
    BOOST_CHECK(!decode_term_names(encode_term_names({"b", "a"}), names));
    BOOST_CHECK(!decode_term_names("T", names));
    BOOST_CHECK(!decode_term_names(std::string("N\x01\x05" "ab", 5), names));
    BOOST_CHECK(!decode_term_names(encode_term_names({"a"}) + "x", names));  // trailing bytes
    BOOST_CHECK(!decode_pending_terms(std::string("T\x01\x01" "a\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80", 14), terms));
}

BOOST_AUTO_TEST_SUITE_END()
