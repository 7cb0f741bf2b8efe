#include "api/errors.hpp"

#include "api/render.hpp"

namespace notesd {

ApiError invalid_parameter(const std::string& field, const std::string& message) {
    return ApiError(400, "INVALID_PARAMETER", message, field);
}

ApiError invalid_cursor() {
    return ApiError(400, "INVALID_CURSOR",
                    "page is not a cursor issued for this user, endpoint, order_by and filters",
                    "page");
}

ApiError unavailable(const std::string& message, int retry_after_seconds) {
    ApiError e(503, "UNAVAILABLE", message);
    e.headers.emplace_back("Retry-After", std::to_string(retry_after_seconds));
    return e;
}

void add_standard_headers(HttpResponse& r, const std::string& request_id) {
    r.headers.emplace_back("Content-Type", "application/json; charset=utf-8");
    r.headers.emplace_back("Cache-Control", "no-store");
    r.headers.emplace_back("X-Content-Type-Options", "nosniff");
    r.headers.emplace_back("X-Request-Id", request_id);
}

HttpResponse render_error(const ApiError& e, const std::string& request_id) {
    // Keys in alphabetical order, as before with jsoncpp's DOM. Every request pays for one
    // error body (the worker prepares the deadline reply before the handler runs), so no DOM.
    JsonOut j;
    j.begin_object();
    j.key("error_category").str(e.status() >= 500 ? "SERVER_ERROR" : "CLIENT_ERROR");
    j.key("error_metadata").begin_object();
    j.key("error_kind").str(e.kind());
    if (!e.field().empty()) j.key("field_name").str(e.field());
    j.key("message").str(e.message());
    j.key("request_id").str(request_id);
    j.end_object();
    j.key("request_id").str(request_id);
    j.end_object();
    HttpResponse r;
    r.status = e.status();
    r.body = j.take();
    add_standard_headers(r, request_id);
    for (const auto& h : e.headers) r.headers.push_back(h);
    return r;
}

}  // namespace notesd
