#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "index/positions.hpp"

using namespace notesd;

BOOST_AUTO_TEST_SUITE(positions)

BOOST_AUTO_TEST_CASE(positions_round_trip_and_reject_what_does_not_fit) {
    BOOST_CHECK_EQUAL(encode_positions({2}, {0, 5, 9}), "2;0,5,4");
    BOOST_CHECK_EQUAL(encode_positions({}, {7}), ";7");
    std::vector<int> t, b;
    BOOST_REQUIRE(decode_positions("2;0,5,4", 1, 3, t, b));
    BOOST_CHECK(t == std::vector<int>({2}));
    BOOST_CHECK(b == std::vector<int>({0, 5, 9}));
    BOOST_REQUIRE(decode_positions(";7", 0, 1, t, b));
    BOOST_CHECK(t.empty());
    BOOST_CHECK(b == std::vector<int>({7}));
    // unknown, malformed, or not the counts the row says: the stored terms decide instead
    for (const char* bad : {"", "2", "2;0,5", "2;0,5,4,1", "x;1", "2;0,,4", "2;0,0", "2;0,5,4;",
                            "1,2;", "2;99999999999"})
        BOOST_CHECK_MESSAGE(!decode_positions(bad, 1, 3, t, b), bad);
    std::vector<int> many(kMaxStoredPositions + 1);
    for (std::size_t i = 0; i < many.size(); ++i) many[i] = static_cast<int>(i * 2);
    BOOST_CHECK_EQUAL(encode_positions({}, many), "");
    many.pop_back();
    BOOST_REQUIRE(decode_positions(encode_positions({}, many), 0, static_cast<int>(many.size()), t, b));
    BOOST_CHECK(b == many);
}

BOOST_AUTO_TEST_SUITE_END()
