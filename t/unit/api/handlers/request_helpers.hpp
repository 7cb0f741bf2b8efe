// Requests and responses for the handlers' tests: a request as the worker hands it over, and
// the JSON of a 200 answer.
#pragma once
#include <boost/test/unit_test.hpp>

#include <json/json.h>

#include <set>
#include <string>

#include "api/http.hpp"
#include "api/json_io.hpp"

namespace notesd::test {

/// `method path` with `body` sent as JSON (no content type without a body).
inline HttpRequest json_request(const std::string& method, const std::string& path,
                                const std::string& body = "") {
    HttpRequest r;
    r.method = method;
    r.path = path;
    r.body = body;
    r.has_body = !body.empty();
    r.content_type = body.empty() ? "" : "application/json";
    r.request_id = "api-request-test";
    return r;
}

/// The body of a 200 answer as a JSON object (the test stops on another status).
inline Json::Value ok_json(const HttpResponse& r) {
    BOOST_REQUIRE_EQUAL(r.status, 200);
    return parse_json_object(r.body);
}

/// The member names of an object.
inline std::set<std::string> keys(const Json::Value& v) {
    const std::vector<std::string> names = v.getMemberNames();
    return std::set<std::string>(names.begin(), names.end());
}

}  // namespace notesd::test
