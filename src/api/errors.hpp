// ApiError: a client-visible failure, and the one renderer of the JSON error envelope.
#pragma once
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "api/http.hpp"

namespace notesd {

class ApiError : public std::runtime_error {
public:
    ApiError(int status, std::string kind, std::string message, std::string field = {})
        : std::runtime_error(message), status_(status), kind_(std::move(kind)),
          field_(std::move(field)) {}
    int status() const { return status_; }
    const std::string& kind() const { return kind_; }
    const std::string& field() const { return field_; }
    std::string message() const { return what(); }
    /// Extra headers: WWW-Authenticate for 401, Allow for 405, Retry-After for 429/503.
    std::vector<std::pair<std::string, std::string>> headers;

private:
    int status_;
    std::string kind_;
    std::string field_;
};

/// 400 INVALID_PARAMETER naming the field.
ApiError invalid_parameter(const std::string& field, const std::string& message);
/// 400 INVALID_CURSOR naming `page`.
ApiError invalid_cursor();
/// 503 UNAVAILABLE with Retry-After.
ApiError unavailable(const std::string& message, int retry_after_seconds = 1);

/// Adds the headers every API response carries (content type, no-store, nosniff, X-Request-Id).
void add_standard_headers(HttpResponse& r, const std::string& request_id);

/// The JSON error envelope of contract section 6 (SERVER_ERROR for status >= 500).
HttpResponse render_error(const ApiError& e, const std::string& request_id);

}  // namespace notesd
