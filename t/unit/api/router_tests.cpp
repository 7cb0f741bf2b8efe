#include <boost/test/unit_test.hpp>

#include "api/auth.hpp"
#include "api/errors.hpp"
#include "api/router.hpp"

using namespace notesd;

namespace {
int status_of(const char* m, const char* p) {
    try {
        route(m, p);
    } catch (const ApiError& e) {
        return e.status();
    }
    return 200;
}
std::string header(const ApiError& e, const std::string& name) {
    for (const auto& h : e.headers)
        if (h.first == name) return h.second;
    return "";
}
}  // namespace

BOOST_AUTO_TEST_SUITE(router)

BOOST_AUTO_TEST_CASE(known_routes) {
    BOOST_CHECK(route("GET", "/v2/notes") == Endpoint::ListNotes);
    BOOST_CHECK(route("GET", "/v2/collections") == Endpoint::ListCollections);
}

BOOST_AUTO_TEST_CASE(unknown_paths_are_404) {
    for (const char* p : {"/v1/notes", "/v3/notes", "/v2/unknown", "/v2/notes/", "/v2", "/"})
        BOOST_CHECK_EQUAL(status_of("GET", p), 404);
}

BOOST_AUTO_TEST_CASE(wrong_method_is_405_with_allow) {
    try {
        route("POST", "/v2/notes");
        BOOST_FAIL("expected 405");
    } catch (const ApiError& e) {
        BOOST_CHECK_EQUAL(e.status(), 405);
        BOOST_CHECK_EQUAL(e.kind(), "METHOD_NOT_ALLOWED");
        BOOST_CHECK_EQUAL(header(e, "Allow"), "GET");
    }
    BOOST_CHECK_EQUAL(status_of("DELETE", "/v2/collections"), 405);
}

BOOST_AUTO_TEST_CASE(bearer_parsing) {
    BOOST_CHECK_EQUAL(bearer_token("Bearer abc"), "abc");
    BOOST_CHECK_EQUAL(bearer_token("bEaReR   abc "), "abc");
    for (const char* bad : {"", "Basic abc", "Bearer", "Bearer ", "Bearerabc", "Bearer a b", "Token abc"}) {
        try {
            bearer_token(bad);
            BOOST_FAIL(std::string("accepted: ") + bad);
        } catch (const ApiError& e) {
            BOOST_CHECK_EQUAL(e.status(), 401);
            BOOST_CHECK_EQUAL(e.kind(), "NOT_AUTHORIZED");
            BOOST_CHECK(header(e, "WWW-Authenticate").rfind("Bearer", 0) == 0);
        }
    }
}

BOOST_AUTO_TEST_CASE(error_envelope_shape) {
    HttpResponse r = render_error(invalid_parameter("limit", "limit must be an integer from 1 to 100"),
                                  "api-request-1");
    BOOST_CHECK_EQUAL(r.status, 400);
    BOOST_CHECK(r.body.find("\"error_category\":\"CLIENT_ERROR\"") != std::string::npos);
    BOOST_CHECK(r.body.find("\"field_name\":\"limit\"") != std::string::npos);
    // the whole body: compact, keys in alphabetical order (as jsoncpp wrote it before)
    BOOST_CHECK_EQUAL(r.body,
                      "{\"error_category\":\"CLIENT_ERROR\",\"error_metadata\":{\"error_kind\":"
                      "\"INVALID_PARAMETER\",\"field_name\":\"limit\",\"message\":\"limit must be an "
                      "integer from 1 to 100\",\"request_id\":\"api-request-1\"},\"request_id\":"
                      "\"api-request-1\"}");
    const HttpResponse q = render_error(invalid_parameter("query", "a \"quoted\" \\ word\n"), "r\x01");
    BOOST_CHECK(q.body.find("\"message\":\"a \\\"quoted\\\" \\\\ word\\n\"") != std::string::npos);
    BOOST_CHECK(q.body.find("\"request_id\":\"r\\u0001\"") != std::string::npos);
    HttpResponse s = render_error(unavailable("down"), "api-request-1");
    BOOST_CHECK(s.body.find("SERVER_ERROR") != std::string::npos);
    bool retry = false;
    for (auto& h : s.headers) retry = retry || h.first == "Retry-After";
    BOOST_CHECK(retry);
}

BOOST_AUTO_TEST_SUITE_END()
