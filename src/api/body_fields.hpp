// Typed reading of JSON request bodies for every write endpoint (contract section 10) and the
// search body: the content-type rule, the object itself, and one reader per field type. Every
// failure is an ApiError 400 INVALID_PARAMETER naming the field and what it allows (415 and
// INVALID_JSON for the body as a whole). In a body `null` means "not given"; unknown fields
// are ignored.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <json/value.h>

#include "api/http.hpp"

namespace notesd {

/// "application/json" with any parameters and case, or no content type at all; anything else
/// is 415 UNSUPPORTED_MEDIA_TYPE.
void require_json_content_type(const std::string& content_type);

/// The request body as a JSON object after the content-type rule. When every field of the
/// endpoint is optional (empty_is_object), an empty body counts as {}; otherwise it is 400
/// INVALID_JSON like any other non-object.
Json::Value parse_body_object(const HttpRequest& req, bool empty_is_object);

/// The canonical lowercase uuid of a path segment, else 400 INVALID_PARAMETER naming the path
/// parameter (`note_id`, `collection_id`, ...).
std::string path_uuid(std::string_view param, std::string_view segment);

/// Checked, typed access to the fields of one body object.
class BodyFields {
public:
    explicit BodyFields(const Json::Value& object) : obj_(object) {}

    /// The field when present and not null.
    const Json::Value* find(const char* field) const;
    bool has(const char* field) const { return find(field) != nullptr; }

    /// A string of min_chars..max_chars Unicode characters (valid UTF-8, no NUL).
    std::optional<std::string> opt_string(const char* field, std::size_t min_chars,
                                          std::size_t max_chars) const;
    std::string req_string(const char* field, std::size_t min_chars, std::size_t max_chars) const;
    /// A uuid in any case, returned canonical lowercase.
    std::optional<std::string> opt_uuid(const char* field) const;
    std::string req_uuid(const char* field) const;
    /// An array of at most max_count uuids, canonical, duplicates removed (first one kept).
    std::vector<std::string> uuid_array(const char* field, std::size_t max_count) const;
    /// An array of at most max_count strings of 1..max_chars characters each.
    std::vector<std::string> string_array(const char* field, std::size_t max_count,
                                          std::size_t max_chars) const;
    /// A JSON integer (not 1.0, not "1") from min to max.
    std::optional<long long> opt_int(const char* field, long long min, long long max) const;
    long long req_int(const char* field, long long min, long long max) const;
    std::optional<bool> opt_bool(const char* field) const;
    /// An RFC 3339 date-time string with offset (the input rule of contract section 1).
    std::optional<long long> opt_time(const char* field) const;

private:
    const Json::Value& obj_;
};

/// How far in the future a written timestamp may lie (clock skew between client and server).
constexpr long long kMaxFutureUs = 60LL * 1000000;

/// A write timestamp: opt_time and at most kMaxFutureUs after now_us.
std::optional<long long> write_time(const BodyFields& body, const char* field, long long now_us);

struct WriteTimes {
    long long created_us = 0;
    long long updated_us = 0;
};

/// `created_at` and `updated_at` of a create (contract section 10): updated_at omitted is
/// now_us (or created_at when that is later, within the future allowance); created_at omitted
/// is the updated_at given, else now_us; updated_at earlier than created_at is a 400 naming
/// updated_at.
WriteTimes create_times(const BodyFields& body, long long now_us);

}  // namespace notesd
