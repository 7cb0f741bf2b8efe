#include <boost/test/unit_test.hpp>

#include "api/cursor.hpp"
#include "base/util.hpp"

using namespace notesd;

namespace {
const std::string kId = "3f0c1c2e-8a51-4c8e-9a43-2f1d7a6b9c01";
const std::string kScope = "notes|o=updated_at|c=|f=0";
}  // namespace

BOOST_AUTO_TEST_SUITE(cursor)

BOOST_AUTO_TEST_CASE(round_trip) {
    CursorCodec c("a-secret-of-at-least-thirty-two-characters");
    std::string t = c.encode({1746368411123456LL, kId, 1234, std::nullopt}, 7, kScope);
    BOOST_CHECK(t.find_first_of("+/=") == std::string::npos);
    auto s = c.decode(t, 7, kScope);
    BOOST_REQUIRE(s);
    BOOST_CHECK_EQUAL(s->sort_us, 1746368411123456LL);
    BOOST_CHECK_EQUAL(s->id, kId);
    BOOST_CHECK_EQUAL(s->total, 1234);
}

BOOST_AUTO_TEST_CASE(negative_sort_values_survive) {
    CursorCodec c("k");
    auto s = c.decode(c.encode({-5, kId, 0, std::nullopt}, 1, kScope), 1, kScope);
    BOOST_REQUIRE(s);
    BOOST_CHECK_EQUAL(s->sort_us, -5);
}

BOOST_AUTO_TEST_CASE(rejects_every_single_character_change) {
    CursorCodec c("k");
    std::string t = c.encode({1700000000000000LL, kId, 3, std::nullopt}, 1, kScope);
    for (std::size_t i = 0; i < t.size(); ++i) {
        std::string bad = t;
        bad[i] = bad[i] == 'A' ? 'B' : 'A';
        BOOST_CHECK_MESSAGE(!c.decode(bad, 1, kScope), "changed position " << i);
    }
}

BOOST_AUTO_TEST_CASE(rejects_truncated_and_extended) {
    CursorCodec c("k");
    std::string t = c.encode({1, kId, 3, std::nullopt}, 1, kScope);
    BOOST_CHECK(!c.decode(t.substr(0, t.size() - 1), 1, kScope));
    BOOST_CHECK(!c.decode(t.substr(0, 10), 1, kScope));
    BOOST_CHECK(!c.decode(t + "AA", 1, kScope));
    BOOST_CHECK(!c.decode("", 1, kScope));
    BOOST_CHECK(!c.decode("not a cursor!", 1, kScope));
}

BOOST_AUTO_TEST_CASE(bound_to_user_scope_and_secret) {
    CursorCodec c("k"), other("k2");
    std::string t = c.encode({1, kId, 3, std::nullopt}, 1, kScope);
    BOOST_CHECK(!c.decode(t, 2, kScope));
    BOOST_CHECK(!c.decode(t, 1, "notes|o=created_at|c=|f=0"));
    BOOST_CHECK(!other.decode(t, 1, kScope));
}

BOOST_AUTO_TEST_CASE(second_sort_value) {
    CursorCodec c("k");
    const std::string with = c.encode({-7, kId, 0, -123456789LL}, 3, kScope);
    auto s = c.decode(with, 3, kScope);
    BOOST_REQUIRE(s);
    BOOST_CHECK_EQUAL(s->sort_us, -7);
    BOOST_REQUIRE(s->tie);
    BOOST_CHECK_EQUAL(*s->tie, -123456789LL);
    auto plain = c.decode(c.encode({-7, kId, 0, std::nullopt}, 3, kScope), 3, kScope);
    BOOST_REQUIRE(plain);
    BOOST_CHECK(!plain->tie);
    for (std::size_t i = 0; i < with.size(); ++i) {
        std::string t = with;
        t[i] = t[i] == 'A' ? 'B' : 'A';
        BOOST_CHECK(!c.decode(t, 3, kScope));
    }
    BOOST_CHECK(!c.decode(with.substr(0, with.size() - 11), 3, kScope));  // a v1 length
    BOOST_CHECK(!c.decode(with, 4, kScope));
}

BOOST_AUTO_TEST_CASE(accepts_padded_standard_alphabet) {
    CursorCodec c("k");
    std::string t = c.encode({1, kId, 3, std::nullopt}, 1, kScope);
    std::string std_alpha = t;
    for (char& ch : std_alpha) ch = ch == '-' ? '+' : ch == '_' ? '/' : ch;
    while (std_alpha.size() % 4) std_alpha += '=';
    BOOST_CHECK(c.decode(std_alpha, 1, kScope));
}

BOOST_AUTO_TEST_SUITE_END()
