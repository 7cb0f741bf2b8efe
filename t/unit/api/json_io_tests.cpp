#include <boost/test/unit_test.hpp>

#include "api/errors.hpp"
#include "api/json_io.hpp"
#include "api/render.hpp"

using namespace notesd;

namespace {
std::string kind_of(const std::string& body) {
    try {
        parse_json_object(body);
    } catch (const ApiError& e) {
        return e.kind();
    }
    return "";
}
// "KIND: message" of the rejection, "" when the body is accepted.
std::string rejection(const std::string& body) {
    try {
        parse_json_object(body);
    } catch (const ApiError& e) {
        return e.kind() + ": " + e.message();
    }
    return "";
}
}  // namespace

BOOST_AUTO_TEST_SUITE(json_io)

BOOST_AUTO_TEST_CASE(strict_reader) {
    BOOST_CHECK(parse_json_object("{\"query\":\"x\"}").isObject());
    for (const char* bad : {"[1,2]", "\"s\"", "{\"a\":1} trailing", "{\"a\":1,}", "{/*c*/}",
                            "{\"a\":1,\"a\":2}", "", "{", "\xff"})
        BOOST_CHECK_MESSAGE(kind_of(bad) == "INVALID_JSON", bad);
}

// RFC 8259 forbids these; jsoncpp's strict mode accepted each of them (issue 20, item 5).
BOOST_AUTO_TEST_CASE(rfc8259_rejections_name_the_problem_and_offset) {
    using namespace std::string_literals;
    const std::string prefix = "INVALID_JSON: the request body is not valid JSON: ";
    BOOST_CHECK_EQUAL(rejection("{\"query\":\"a\"}\0{\"limit\":\"x\"}"s),
                      prefix + "trailing a NUL byte after the JSON value at byte 13");
    BOOST_CHECK_EQUAL(rejection("{\"query\":\"a\0b\"}"s), prefix + "a NUL byte in a string at byte 11");
    BOOST_CHECK_EQUAL(rejection("{\"query\":\"a\nb\"}"),
                      prefix + "a raw control character U+000A in a string (escape it) at byte 11");
    BOOST_CHECK_EQUAL(rejection("{\"query\":\"\x01\"}"),
                      prefix + "a raw control character U+0001 in a string (escape it) at byte 10");
    BOOST_CHECK_EQUAL(rejection("{\"query\":\"\\udc00\"}"), prefix + "an escaped lone surrogate U+DC00 at byte 10");
    BOOST_CHECK_EQUAL(rejection("{\"query\":\"\xc0\xaf\"}"), prefix + "invalid UTF-8 (byte 0xC0) at byte 10");
    BOOST_CHECK_EQUAL(rejection("{\"limit\":1,\"limit\":2}"), prefix + "duplicate key \"limit\" at byte 11");
    BOOST_CHECK_EQUAL(rejection("{\"a\":{\"b\":1,\"\\u0062\":2}}"), prefix + "duplicate key \"b\" at byte 12");
    BOOST_CHECK_EQUAL(rejection("{\"a\":1} {\"a\":2}"), prefix + "trailing '{' after the JSON value at byte 8");
    BOOST_CHECK_EQUAL(rejection("{\"a\":01}"), prefix + "a number with a leading zero at byte 5");
    BOOST_CHECK_EQUAL(rejection("{\"limit\":1e400}"), prefix + "a number out of range");
    BOOST_CHECK_EQUAL(rejection("[1]"), "INVALID_JSON: the request body must be a JSON object");
    BOOST_CHECK_EQUAL(rejection(" {\"a\":[1,{\"b\":\"\\u00e9\\n\"}]}\r\n"), "");
}

BOOST_AUTO_TEST_CASE(deep_nesting_is_rejected_not_crashing) {
    std::string deep = "{\"a\":" + std::string(5000, '[') + std::string(5000, ']') + "}";
    BOOST_CHECK_EQUAL(kind_of(deep), "INVALID_JSON");
}

BOOST_AUTO_TEST_CASE(writer_escapes_and_repairs_utf8) {
    JsonOut j;
    j.begin_object().key("s").str("a\"b\\c\n\x01\xE6\x9D\xB1").key("bad").str("x\xffy").end_object();
    BOOST_CHECK_EQUAL(j.text(), "{\"s\":\"a\\\"b\\\\c\\n\\u0001\xE6\x9D\xB1\",\"bad\":\"x\xEF\xBF\xBDy\"}");
    BOOST_CHECK(parse_json_object(j.text()).isObject());
}

BOOST_AUTO_TEST_CASE(note_page_envelope) {
    NoteItem n;
    n.id = "3f0c1c2e-8a51-4c8e-9a43-2f1d7a6b9c01";
    n.title = "T";
    n.created_us = 1746368411000000LL;
    n.updated_us = 1746368411120000LL;
    std::string last = render_note_page("api-request-x", {n}, 1, std::nullopt);
    Json::Value v = parse_json_object(last);
    BOOST_CHECK(!v.isMember("next_page"));
    BOOST_CHECK_EQUAL(v["total"].asInt(), 1);
    BOOST_CHECK_EQUAL(v["results"][0]["updated_at"].asString(), "2025-05-04T14:20:11.120Z");
    BOOST_CHECK(!v["results"][0].isMember("content"));
    BOOST_CHECK(v["results"][0]["collection_ids"].isArray());
    Json::Value more = parse_json_object(render_note_page("r", {n}, 2, std::string("abc")));
    BOOST_CHECK_EQUAL(more["next_page"].asString(), "abc");
}

BOOST_AUTO_TEST_CASE(collection_page_has_null_next_page) {
    Json::Value v = parse_json_object(render_collection_page("r", {}, 0, std::nullopt));
    BOOST_CHECK(v.isMember("next_page"));
    BOOST_CHECK(v["next_page"].isNull());
}

BOOST_AUTO_TEST_SUITE_END()
