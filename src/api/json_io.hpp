// Strict JSON input with checked access (design 7.2): no comments, no trailing garbage, no
// duplicate keys, objects only at the root.
#pragma once
#include <json/json.h>

#include <string_view>

namespace notesd {

/// Parses a request body that must be a JSON object; throws ApiError 400 INVALID_JSON.
Json::Value parse_json_object(std::string_view body);

}  // namespace notesd
