#include <boost/test/unit_test.hpp>

#include "api/body_fields.hpp"
#include "api/errors.hpp"
#include "api/json_io.hpp"
#include "api/params.hpp"
#include "api/query_string.hpp"

using namespace notesd;

namespace {

constexpr long long kNow = 1750000000000000LL;  // 2025-06-15T15:06:40Z

// "status kind field" of the ApiError f throws, or "ok".
template <class F>
std::string failure(F&& f) {
    try {
        f();
    } catch (const ApiError& e) {
        return std::to_string(e.status()) + " " + e.kind() + " " + e.field();
    }
    return "ok";
}

HttpRequest post(const std::string& body, const std::string& type = "application/json") {
    HttpRequest r;
    r.method = "POST";
    r.content_type = type;
    r.body = body;
    r.has_body = !body.empty();
    return r;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(body_fields)

BOOST_AUTO_TEST_CASE(content_type_and_empty_body) {
    BOOST_CHECK(parse_body_object(post("{}", "Application/JSON; charset=utf-8"), false).isObject());
    BOOST_CHECK(parse_body_object(post("{\"a\":1}", ""), false).isObject());
    BOOST_CHECK_EQUAL(failure([] { parse_body_object(post("{}", "text/plain"), false); }),
                      "415 UNSUPPORTED_MEDIA_TYPE ");
    BOOST_CHECK_EQUAL(parse_body_object(post(""), true).size(), 0u);
    BOOST_CHECK_EQUAL(parse_body_object(post(" \n"), true).size(), 0u);
    BOOST_CHECK_EQUAL(failure([] { parse_body_object(post(""), false); }), "400 INVALID_JSON ");
    BOOST_CHECK_EQUAL(failure([] { parse_body_object(post("[1]"), true); }), "400 INVALID_JSON ");
    // The content-type rule holds for an empty body too.
    BOOST_CHECK_EQUAL(failure([] { parse_body_object(post("", "text/plain"), true); }),
                      "415 UNSUPPORTED_MEDIA_TYPE ");
}

BOOST_AUTO_TEST_CASE(path_uuids) {
    BOOST_CHECK_EQUAL(path_uuid("note_id", "3F0C1C2E-8A51-4C8E-9A43-2F1D7A6B9C01"),
                      "3f0c1c2e-8a51-4c8e-9a43-2f1d7a6b9c01");
    BOOST_CHECK_EQUAL(failure([] { path_uuid("note_id", "nope"); }), "400 INVALID_PARAMETER note_id");
    BOOST_CHECK_EQUAL(failure([] { path_uuid("collection_id", ""); }),
                      "400 INVALID_PARAMETER collection_id");
}

BOOST_AUTO_TEST_CASE(strings) {
    Json::Value o = parse_json_object(
        "{\"t\":\"h\\u00e9llo\",\"n\":null,\"i\":5,\"nul\":\"a\\u0000b\",\"e\":\"\"}");
    // An escaped lone surrogate is already INVALID_JSON in the reader; the invalid UTF-8 jsoncpp
    // would decode it to stays refused here for a tree built some other way.
    BOOST_CHECK_EQUAL(failure([] { parse_json_object("{\"lone\":\"\\udc00\"}"); }), "400 INVALID_JSON ");
    o["lone"] = "\xed\xb0\x80";
    BodyFields b(o);
    BOOST_CHECK_EQUAL(*b.opt_string("t", 1, 5), "h\xc3\xa9llo");  // 5 characters, 6 bytes
    BOOST_CHECK_EQUAL(failure([&] { b.opt_string("t", 1, 4); }), "400 INVALID_PARAMETER t");
    BOOST_CHECK(!b.opt_string("n", 0, 5));  // null is "not given"
    BOOST_CHECK(!b.opt_string("missing", 0, 5));
    BOOST_CHECK_EQUAL(failure([&] { b.req_string("n", 1, 5); }), "400 INVALID_PARAMETER n");
    BOOST_CHECK_EQUAL(failure([&] { b.opt_string("i", 0, 5); }), "400 INVALID_PARAMETER i");
    BOOST_CHECK_EQUAL(failure([&] { b.opt_string("nul", 0, 5); }), "400 INVALID_PARAMETER nul");
    BOOST_CHECK_EQUAL(failure([&] { b.opt_string("lone", 0, 5); }), "400 INVALID_PARAMETER lone");
    BOOST_CHECK_EQUAL(*b.opt_string("e", 0, 5), "");
    BOOST_CHECK_EQUAL(failure([&] { b.opt_string("e", 1, 5); }), "400 INVALID_PARAMETER e");
    try {
        b.opt_string("t", 1, 4);
    } catch (const ApiError& e) {
        BOOST_CHECK_EQUAL(e.message(), "t must be a string of from 1 to 4 characters");
    }
}

BOOST_AUTO_TEST_CASE(uuids_and_arrays) {
    const Json::Value o = parse_json_object(
        "{\"id\":\"3F0C1C2E-8A51-4C8E-9A43-2F1D7A6B9C01\",\"bad\":\"x\",\"num\":3,"
        "\"ids\":[\"3f0c1c2e-8a51-4c8e-9a43-2f1d7a6b9c01\",\"3F0C1C2E-8A51-4C8E-9A43-2F1D7A6B9C01\","
        "\"00000000-0000-0000-0000-000000000001\"],\"mixed\":[\"3f0c1c2e-8a51-4c8e-9a43-2f1d7a6b9c01\",1],"
        "\"names\":[\"a\",\"b\"],\"empty_name\":[\"\"],\"obj\":{}}");
    BodyFields b(o);
    BOOST_CHECK_EQUAL(*b.opt_uuid("id"), "3f0c1c2e-8a51-4c8e-9a43-2f1d7a6b9c01");
    BOOST_CHECK(!b.opt_uuid("missing"));
    BOOST_CHECK_EQUAL(failure([&] { b.opt_uuid("bad"); }), "400 INVALID_PARAMETER bad");
    BOOST_CHECK_EQUAL(failure([&] { b.opt_uuid("num"); }), "400 INVALID_PARAMETER num");
    BOOST_CHECK_EQUAL(failure([&] { b.req_uuid("missing"); }), "400 INVALID_PARAMETER missing");
    const std::vector<std::string> ids = b.uuid_array("ids", 3);
    BOOST_REQUIRE_EQUAL(ids.size(), 2u);  // duplicates in another case are one id
    BOOST_CHECK_EQUAL(ids[1], "00000000-0000-0000-0000-000000000001");
    BOOST_CHECK_EQUAL(failure([&] { b.uuid_array("ids", 2); }), "400 INVALID_PARAMETER ids");
    BOOST_CHECK_EQUAL(failure([&] { b.uuid_array("mixed", 5); }), "400 INVALID_PARAMETER mixed");
    BOOST_CHECK_EQUAL(failure([&] { b.uuid_array("obj", 5); }), "400 INVALID_PARAMETER obj");
    BOOST_CHECK(b.uuid_array("missing", 5).empty());
    BOOST_CHECK_EQUAL(b.string_array("names", 2, 10).size(), 2u);
    BOOST_CHECK_EQUAL(failure([&] { b.string_array("names", 1, 10); }), "400 INVALID_PARAMETER names");
    BOOST_CHECK_EQUAL(failure([&] { b.string_array("empty_name", 1, 10); }),
                      "400 INVALID_PARAMETER empty_name");
}

BOOST_AUTO_TEST_CASE(integers_and_booleans) {
    const Json::Value o = parse_json_object(
        "{\"v\":3,\"real\":3.0,\"text\":\"3\",\"neg\":-1,\"big\":18446744073709551615,"
        "\"huge\":18446744073709551616,\"yes\":true,\"one\":1}");
    BodyFields b(o);
    BOOST_CHECK_EQUAL(*b.opt_int("v", 1, 10), 3);
    BOOST_CHECK_EQUAL(failure([&] { b.opt_int("v", 4, 10); }), "400 INVALID_PARAMETER v");
    for (const char* f : {"real", "text", "neg", "big", "huge"})
        BOOST_CHECK_EQUAL(failure([&] { b.opt_int(f, 0, 10); }), std::string("400 INVALID_PARAMETER ") + f);
    BOOST_CHECK_EQUAL(failure([&] { b.req_int("missing", 1, 10); }), "400 INVALID_PARAMETER missing");
    BOOST_CHECK(*b.opt_bool("yes"));
    BOOST_CHECK(!b.opt_bool("missing"));
    BOOST_CHECK_EQUAL(failure([&] { b.opt_bool("one"); }), "400 INVALID_PARAMETER one");
}

BOOST_AUTO_TEST_CASE(write_timestamps) {
    auto times = [](const std::string& json) {
        const Json::Value o = parse_json_object(json);
        return create_times(BodyFields(o), kNow);
    };
    WriteTimes t = times("{}");
    BOOST_CHECK_EQUAL(t.created_us, kNow);
    BOOST_CHECK_EQUAL(t.updated_us, kNow);
    t = times("{\"updated_at\":\"2025-01-01T00:00:00Z\"}");
    BOOST_CHECK_EQUAL(t.updated_us, 1735689600000000LL);
    BOOST_CHECK_EQUAL(t.created_us, 1735689600000000LL);  // created_at defaults to updated_at
    t = times("{\"created_at\":\"2025-01-01T01:00:00+01:00\"}");
    BOOST_CHECK_EQUAL(t.created_us, 1735689600000000LL);
    BOOST_CHECK_EQUAL(t.updated_us, kNow);
    t = times("{\"created_at\":\"2025-06-15T15:07:10Z\"}");  // 30 s ahead: updated_at follows
    BOOST_CHECK_EQUAL(t.updated_us, t.created_us);
    BOOST_CHECK_EQUAL(times("{\"updated_at\":\"2025-06-15T15:07:40Z\"}").updated_us, kNow + 60000000);
    auto fails = [&](const std::string& json) { return failure([&] { times(json); }); };
    BOOST_CHECK_EQUAL(fails("{\"updated_at\":\"2025-06-15T15:07:40.000001Z\"}"),
                      "400 INVALID_PARAMETER updated_at");
    BOOST_CHECK_EQUAL(fails("{\"created_at\":\"2099-01-01T00:00:00Z\"}"),
                      "400 INVALID_PARAMETER created_at");
    BOOST_CHECK_EQUAL(fails("{\"created_at\":\"2025-01-02T00:00:00Z\",\"updated_at\":\"2025-01-01T00:00:00Z\"}"),
                      "400 INVALID_PARAMETER updated_at");
    BOOST_CHECK_EQUAL(fails("{\"created_at\":\"2025-01-02\"}"), "400 INVALID_PARAMETER created_at");
    BOOST_CHECK_EQUAL(fails("{\"created_at\":\"2025-01-02T00:00:00\"}"), "400 INVALID_PARAMETER created_at");
    BOOST_CHECK_EQUAL(fails("{\"created_at\":5}"), "400 INVALID_PARAMETER created_at");
    // a space for the offset's `+` is a query string's artifact (contract section 1), never JSON's
    BOOST_CHECK_EQUAL(fails("{\"created_at\":\"2025-01-01T10:00:00 01:00\"}"),
                      "400 INVALID_PARAMETER created_at");
    BOOST_CHECK_EQUAL(fails("{\"updated_at\":\"\"}"), "400 INVALID_PARAMETER updated_at");
    BOOST_CHECK_EQUAL(times("{\"created_at\":null}").created_us, kNow);
}

// Contract section 5: a pagination value in both the query string and the body is an error only
// when the two differ; "020" and 20 are the same limit.
BOOST_AUTO_TEST_CASE(search_pagination_in_both_places) {
    const Json::Value body = parse_json_object("{\"query\":\"x\",\"limit\":20,\"offset\":0}");
    const SearchCommand c = parse_search(QueryArgs("limit=020&offset=00"), body);
    BOOST_CHECK_EQUAL(c.limit, 20);
    BOOST_CHECK_EQUAL(c.offset, 0);
    auto error_of = [&](const std::string& query) {
        try {
            parse_search(QueryArgs(query), body);
        } catch (const ApiError& e) {
            return e.field();
        }
        return std::string("none");
    };
    BOOST_CHECK_EQUAL(error_of("limit=21"), "limit");
    BOOST_CHECK_EQUAL(error_of("limit=51"), "limit");  // out of range, whatever the body says
    BOOST_CHECK_EQUAL(error_of("offset=1"), "offset");
    // a bound's space for `+` in the body is an error (query strings: list_params_tests)
    bool refused = false;
    try {
        parse_search(QueryArgs(""), parse_json_object("{\"query\":\"x\",\"filter_by_updated_after\":"
                                                      "\"2025-01-01T10:00:00 01:00\"}"));
    } catch (const ApiError& e) {
        refused = e.field() == "filter_by_updated_after";
    }
    BOOST_CHECK(refused);
}

BOOST_AUTO_TEST_CASE(search_config_include_content) {
    auto include = [](const std::string& config) {
        const Json::Value body = parse_json_object("{\"query\":\"x\",\"config\":" + config + "}");
        return parse_search(QueryArgs(""), body).include_content;
    };
    BOOST_CHECK(!include("{}"));
    BOOST_CHECK(include("{\"include_note_content\":true}"));
    BOOST_CHECK(include("{\"include_content\":true}"));  // the older clients' name
    BOOST_CHECK(!include("{\"include_content\":false}"));
    BOOST_CHECK(!include("{\"include_note_content\":false,\"include_content\":true}"));
    BOOST_CHECK_EQUAL(failure([&] { include("{\"include_content\":\"yes\"}"); }),
                      "400 INVALID_PARAMETER config.include_content");
}

BOOST_AUTO_TEST_SUITE_END()
