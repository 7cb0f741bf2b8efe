// Plain HTTP request/response values: the seam between the FastCGI transport and the application.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace notesd {

struct HttpRequest {
    std::string method;          // "GET", "POST", ...
    std::string path;            // decoded path without query, e.g. "/v2/notes"
    std::string query;           // raw query string (still percent-encoded), may be empty
    std::string content_type;    // CONTENT_TYPE, may be empty
    bool has_body = false;       // CONTENT_LENGTH was present and > 0
    std::string body;            // at most the configured body cap
    std::string authorization;   // HTTP_AUTHORIZATION, may be empty
    std::string if_none_match;   // HTTP_IF_NONE_MATCH, may be empty
    std::string request_id;      // "api-request-<uuid>", derived from nginx's $request_id
    std::string remote_addr;
};

struct HttpResponse {
    int status = 200;
    std::vector<std::pair<std::string, std::string>> headers;  // besides the standard JSON ones
    std::string body;
    long long user_id = 0;       // for the access log line; 0 when unauthenticated
    int endpoint = -1;           // endpoint_index() of the route taken; -1: none (404, 405...)
};

}  // namespace notesd
