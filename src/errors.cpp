#include "errors.hpp"

#include <json/json.h>

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
    Json::Value meta(Json::objectValue);
    meta["error_kind"] = e.kind();
    meta["message"] = e.message();
    if (!e.field().empty()) meta["field_name"] = e.field();
    meta["request_id"] = request_id;
    Json::Value root(Json::objectValue);
    root["request_id"] = request_id;
    root["error_category"] = e.status() >= 500 ? "SERVER_ERROR" : "CLIENT_ERROR";
    root["error_metadata"] = std::move(meta);

    Json::StreamWriterBuilder b;
    b["indentation"] = "";
    b["emitUTF8"] = true;  // messages are ours and valid UTF-8
    HttpResponse r;
    r.status = e.status();
    r.body = Json::writeString(b, root);
    add_standard_headers(r, request_id);
    for (const auto& h : e.headers) r.headers.push_back(h);
    return r;
}

}  // namespace notesd
