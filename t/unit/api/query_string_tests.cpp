#include <boost/test/unit_test.hpp>

#include "api/errors.hpp"
#include "api/query_string.hpp"

using namespace notesd;

BOOST_AUTO_TEST_SUITE(query_string)

BOOST_AUTO_TEST_CASE(decodes_percent_and_plus) {
    QueryArgs q("a=1&b=x%20y+z&c=%E6%9D%B1&d=&e");
    BOOST_CHECK_EQUAL(*q.get("a"), "1");
    BOOST_CHECK_EQUAL(*q.get("b"), "x y z");
    BOOST_CHECK_EQUAL(*q.get("c"), "\xE6\x9D\xB1");
    BOOST_CHECK_EQUAL(*q.get("d"), "");
    BOOST_CHECK_EQUAL(*q.get("e"), "");
    BOOST_CHECK(!q.get("f"));
}

BOOST_AUTO_TEST_CASE(encoded_keys_match) {
    QueryArgs q("%6Cimit=5");
    BOOST_CHECK_EQUAL(*q.get("limit"), "5");
}

BOOST_AUTO_TEST_CASE(repeated_known_key_is_an_error) {
    QueryArgs q("limit=1&limit=2&x=1&x=2");
    try {
        q.get("limit");
        BOOST_FAIL("expected an error");
    } catch (const ApiError& e) {
        BOOST_CHECK_EQUAL(e.status(), 400);
        BOOST_CHECK_EQUAL(e.kind(), "INVALID_PARAMETER");
        BOOST_CHECK_EQUAL(e.field(), "limit");
    }
}

BOOST_AUTO_TEST_CASE(malformed_values_fail_only_when_read) {
    QueryArgs q("limit=%zz&junk=%&page=%C3%28&ok=1");
    BOOST_CHECK_THROW(q.get("limit"), ApiError);
    BOOST_CHECK_THROW(q.get("page"), ApiError);  // invalid UTF-8
    BOOST_CHECK_EQUAL(*q.get("ok"), "1");
}

BOOST_AUTO_TEST_CASE(empty_pieces_are_ignored) {
    QueryArgs q("&&a=1&&");
    BOOST_CHECK_EQUAL(*q.get("a"), "1");
    QueryArgs empty("");
    BOOST_CHECK(!empty.get("a"));
}

BOOST_AUTO_TEST_SUITE_END()
