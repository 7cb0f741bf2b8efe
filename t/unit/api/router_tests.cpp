#include <boost/test/unit_test.hpp>

#include <set>
#include <string>

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
    BOOST_CHECK(route("GET", "/v2/notes").endpoint == Endpoint::ListNotes);
    BOOST_CHECK(route("GET", "/v2/collections").endpoint == Endpoint::ListCollections);
    BOOST_CHECK(route("POST", "/v2/notes/search").endpoint == Endpoint::SearchNotes);
    BOOST_CHECK(!route("POST", "/v2/notes/search").writes);
    const Route get = route("GET", "/v2/notes/ABC");
    BOOST_CHECK(get.endpoint == Endpoint::GetNote);
    BOOST_REQUIRE_EQUAL(get.params.size(), 1u);
    BOOST_CHECK_EQUAL(get.params[0], "ABC");  // the handler validates it
    BOOST_CHECK(!get.writes);
    BOOST_CHECK(route("PATCH", "/v2/notes/x").writes);
    BOOST_CHECK(route("POST", "/v2/notes").endpoint == Endpoint::CreateNote);
    BOOST_CHECK(route("POST", "/v2/notes/x/trash").endpoint == Endpoint::TrashNote);
    BOOST_CHECK(route("POST", "/v2/notes/x/restore").endpoint == Endpoint::RestoreNote);
    BOOST_CHECK(route("PATCH", "/v2/notes/x/created-at").endpoint == Endpoint::SetNoteCreated);
}

BOOST_AUTO_TEST_CASE(unknown_paths_are_404) {
    for (const char* p : {"/v1/notes", "/v3/notes", "/v2/unknown", "/v2/notes/", "/v2", "/",
                          "/v2/notes//trash", "/v2/notes/x/unknown", "/v2/notes/x/trash/"})
        BOOST_CHECK_EQUAL(status_of("GET", p), 404);
}

BOOST_AUTO_TEST_CASE(wrong_method_is_405_with_allow) {
    try {
        route("PUT", "/v2/notes");
        BOOST_FAIL("expected 405");
    } catch (const ApiError& e) {
        BOOST_CHECK_EQUAL(e.status(), 405);
        BOOST_CHECK_EQUAL(e.kind(), "METHOD_NOT_ALLOWED");
        BOOST_CHECK_EQUAL(header(e, "Allow"), "GET, POST");
    }
    BOOST_CHECK_EQUAL(status_of("DELETE", "/v2/collections"), 405);
    try {
        route("POST", "/v2/notes/x");
        BOOST_FAIL("expected 405");
    } catch (const ApiError& e) {
        BOOST_CHECK_EQUAL(header(e, "Allow"), "GET, PATCH, DELETE");
    }
    try {
        route("GET", "/v2/notes/search");  // the literal path, not a note id
        BOOST_FAIL("expected 405");
    } catch (const ApiError& e) {
        BOOST_CHECK_EQUAL(header(e, "Allow"), "POST");
    }
    try {
        route("DELETE", "/v2/notes");
        BOOST_FAIL("expected 405");
    } catch (const ApiError& e) {
        BOOST_CHECK_EQUAL(header(e, "Allow"), "GET, POST");
    }
}

BOOST_AUTO_TEST_CASE(body_limits_follow_the_endpoint) {
    BOOST_CHECK_EQUAL(body_limit("POST", "/v2/notes", 65536), kNoteBodyBytes);
    BOOST_CHECK_EQUAL(body_limit("PATCH", "/v2/notes/x", 65536), kNoteBodyBytes);
    BOOST_CHECK_EQUAL(body_limit("POST", "/v2/notes/search", 65536), 65536u);
    BOOST_CHECK_EQUAL(body_limit("PATCH", "/v2/notes/x/created-at", 65536), 65536u);
    BOOST_CHECK_EQUAL(body_limit("GET", "/v2/notes", 65536), 65536u);
    BOOST_CHECK_EQUAL(body_limit("POST", "/v2/unknown", 65536), 65536u);
}

BOOST_AUTO_TEST_CASE(collection_paths) {
    const Route r = route("POST", "/v2/collections/AB-cd/notes/x1/move");
    BOOST_CHECK(r.endpoint == Endpoint::MoveNote);
    BOOST_CHECK(r.writes);
    BOOST_CHECK((r.params == std::vector<std::string>{"AB-cd", "x1"}));  // raw: handlers validate
    // fixed text wins over a parameter in the same place
    BOOST_CHECK(route("POST", "/v2/collections/search").endpoint == Endpoint::SearchCollections);
    BOOST_CHECK(route("POST", "/v2/notes/extended-search").endpoint == Endpoint::ExtendedSearch);
    BOOST_CHECK(route("GET", "/v2/collections/x").endpoint == Endpoint::GetCollection);
    BOOST_CHECK(!route("GET", "/v2/collections/x").writes);
    BOOST_CHECK(route("POST", "/v2/collections").writes);
    BOOST_CHECK(route("DELETE", "/v2/collections/x/notes/y").endpoint == Endpoint::UnlinkNote);
    BOOST_CHECK(route("PUT", "/v2/collections/x/notes/y").writes);
    BOOST_CHECK(route("GET", "/v2/notes/n/related-notes").endpoint == Endpoint::RelatedNotes);
    for (const char* p : {"/v2/collections//notes/y", "/v2/collections/x/notes/", "/v2/collections/x/",
                          "/v2/collections/x/notes/y/move/z", "/v2/notes/n/related", "/v2/collections/x/y"})
        BOOST_CHECK_EQUAL(status_of("GET", p), 404);
}

BOOST_AUTO_TEST_CASE(allow_lists_every_method_of_a_template) {
    const std::pair<const char*, const char*> cases[] = {
        {"/v2/collections", "GET, POST"},
        {"/v2/collections/x", "GET, PATCH, DELETE"},
        {"/v2/collections/x/notes/y", "PUT, DELETE"},
        {"/v2/collections/search", "POST"},
    };
    for (const auto& [path, allow] : cases) {
        try {
            route("OPTIONS", path);
            BOOST_FAIL("expected 405");
        } catch (const ApiError& e) {
            BOOST_CHECK_EQUAL(e.status(), 405);
            BOOST_CHECK_EQUAL(header(e, "Allow"), allow);
        }
    }
}

// The status page counts requests per endpoint_name: every endpoint in kAllEndpoints, in the
// enum's order, with a name of its own.
BOOST_AUTO_TEST_CASE(every_endpoint_has_a_metrics_name) {
    std::set<std::string> names;
    for (int i = 0; i < kEndpointCount; ++i) {
        BOOST_CHECK_EQUAL(endpoint_index(kAllEndpoints[i]), i);
        const std::string name = endpoint_name(kAllEndpoints[i]);
        BOOST_CHECK_MESSAGE(name != "unknown", "endpoint " << i << " has no name");
        BOOST_CHECK_MESSAGE(names.insert(name).second, name << " twice");
    }
    BOOST_CHECK_EQUAL(kEndpointCount, 20);
    BOOST_CHECK_EQUAL(endpoint_name(route("POST", "/v2/notes").endpoint), "create_note");
    BOOST_CHECK_EQUAL(endpoint_name(route("POST", "/v2/collections/c/notes/n/move").endpoint),
                      "move_note");
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
