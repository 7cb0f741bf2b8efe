#include "api/body_fields.hpp"

#include <algorithm>
#include <cstring>

#include "api/errors.hpp"
#include "api/json_io.hpp"
#include "api/params.hpp"
#include "base/util.hpp"

namespace notesd {
namespace {

std::string chars_text(std::size_t min_chars, std::size_t max_chars) {
    if (min_chars == 0) return "at most " + std::to_string(max_chars) + " characters";
    return "from " + std::to_string(min_chars) + " to " + std::to_string(max_chars) + " characters";
}

// jsoncpp decodes \u escapes itself: \u0000 comes out as a NUL byte, which the databases do not
// store as text. An escaped lone surrogate (invalid UTF-8 once decoded) is INVALID_JSON in the
// reader already; both are refused here for any tree that reaches a field reader.
void check_text(const std::string& field, const std::string& s, std::size_t min_chars,
                std::size_t max_chars, const std::string& what) {
    if (!valid_utf8(s) || s.find('\0') != std::string::npos)
        throw invalid_parameter(field, field + " must be UTF-8 text without NUL characters");
    const std::size_t n = utf8_length(s);
    if (n < min_chars || n > max_chars)
        throw invalid_parameter(field, field + " must be " + what + " of " +
                                           chars_text(min_chars, max_chars));
}

std::string uuid_message(const std::string& field) {
    return field + " must be a UUID such as 3f0c1c2e-8a51-4c8e-9a43-2f1d7a6b9c01";
}

}  // namespace

void require_json_content_type(const std::string& content_type) {
    std::string media = content_type.substr(0, content_type.find(';'));
    while (!media.empty() && (media.back() == ' ' || media.back() == '\t')) media.pop_back();
    while (!media.empty() && (media.front() == ' ' || media.front() == '\t')) media.erase(0, 1);
    for (char& c : media) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    if (!media.empty() && media != "application/json")
        throw ApiError(415, "UNSUPPORTED_MEDIA_TYPE",
                       "the request body must be JSON sent as Content-Type: application/json");
}

Json::Value parse_body_object(const HttpRequest& req, bool empty_is_object) {
    require_json_content_type(req.content_type);
    if (empty_is_object && req.body.find_first_not_of(" \t\r\n") == std::string::npos)
        return Json::Value(Json::objectValue);
    return parse_json_object(req.body);
}

std::string path_uuid(std::string_view param, std::string_view segment) {
    if (auto u = parse_uuid(segment)) return *u;
    const std::string p(param);
    throw invalid_parameter(p, uuid_message(p));
}

const Json::Value* BodyFields::find(const char* field) const {
    const Json::Value* v = obj_.find(field, field + std::strlen(field));
    return v && !v->isNull() ? v : nullptr;
}

std::optional<std::string> BodyFields::opt_string(const char* field, std::size_t min_chars,
                                                  std::size_t max_chars) const {
    const Json::Value* v = find(field);
    if (!v) return std::nullopt;
    const std::string f(field);
    if (!v->isString())
        throw invalid_parameter(f, f + " must be a string of " + chars_text(min_chars, max_chars));
    std::string s = v->asString();
    check_text(f, s, min_chars, max_chars, "a string");
    return s;
}

std::string BodyFields::req_string(const char* field, std::size_t min_chars,
                                   std::size_t max_chars) const {
    if (auto s = opt_string(field, min_chars, max_chars)) return *s;
    const std::string f(field);
    throw invalid_parameter(f, f + " is required: a string of " + chars_text(min_chars, max_chars));
}

std::optional<std::string> BodyFields::opt_uuid(const char* field) const {
    const Json::Value* v = find(field);
    if (!v) return std::nullopt;
    std::optional<std::string> u = v->isString() ? parse_uuid(v->asString()) : std::nullopt;
    if (!u) throw invalid_parameter(field, uuid_message(field));
    return u;
}

std::string BodyFields::req_uuid(const char* field) const {
    if (auto u = opt_uuid(field)) return *u;
    const std::string f(field);
    throw invalid_parameter(f, f + " is required: a UUID such as 3f0c1c2e-8a51-4c8e-9a43-2f1d7a6b9c01");
}

std::vector<std::string> BodyFields::uuid_array(const char* field, std::size_t max_count) const {
    std::vector<std::string> out;
    const Json::Value* v = find(field);
    if (!v) return out;
    const std::string f(field);
    const std::string rule = f + " must be an array of at most " + std::to_string(max_count) + " UUIDs";
    if (!v->isArray() || v->size() > max_count) throw invalid_parameter(f, rule);
    for (const Json::Value& item : *v) {
        std::optional<std::string> u = item.isString() ? parse_uuid(item.asString()) : std::nullopt;
        if (!u) throw invalid_parameter(f, rule);
        if (std::find(out.begin(), out.end(), *u) == out.end()) out.push_back(std::move(*u));
    }
    return out;
}

std::vector<std::string> BodyFields::string_array(const char* field, std::size_t max_count,
                                                  std::size_t max_chars) const {
    std::vector<std::string> out;
    const Json::Value* v = find(field);
    if (!v) return out;
    const std::string f(field);
    const std::string rule = f + " must be an array of at most " + std::to_string(max_count) +
                             " strings of " + chars_text(1, max_chars);
    if (!v->isArray() || v->size() > max_count) throw invalid_parameter(f, rule);
    for (const Json::Value& item : *v) {
        if (!item.isString()) throw invalid_parameter(f, rule);
        std::string s = item.asString();
        if (!valid_utf8(s) || s.find('\0') != std::string::npos || s.empty() ||
            utf8_length(s) > max_chars)
            throw invalid_parameter(f, rule);
        out.push_back(std::move(s));
    }
    return out;
}

std::optional<long long> BodyFields::opt_int(const char* field, long long min, long long max) const {
    const Json::Value* v = find(field);
    if (!v) return std::nullopt;
    // isInt64() is also true for 1.0; a JSON integer has the integer value types.
    const bool integer = v->type() == Json::intValue ||
                         (v->type() == Json::uintValue && v->isInt64());
    if (!integer || v->asInt64() < min || v->asInt64() > max) {
        const std::string f(field);
        throw invalid_parameter(f, f + " must be an integer from " + std::to_string(min) + " to " +
                                       std::to_string(max));
    }
    return v->asInt64();
}

long long BodyFields::req_int(const char* field, long long min, long long max) const {
    if (auto n = opt_int(field, min, max)) return *n;
    const std::string f(field);
    throw invalid_parameter(f, f + " is required: an integer from " + std::to_string(min) +
                                   " to " + std::to_string(max));
}

std::optional<bool> BodyFields::opt_bool(const char* field) const {
    const Json::Value* v = find(field);
    if (!v) return std::nullopt;
    if (!v->isBool()) throw invalid_parameter(field, std::string(field) + " must be true or false");
    return v->asBool();
}

std::optional<long long> BodyFields::opt_time(const char* field) const {
    const Json::Value* v = find(field);
    if (!v) return std::nullopt;
    // parse_time_param names the field and the format; a non-string is never a date-time.
    return parse_time_param(field,
                            v->isString() && !v->asString().empty() ? v->asString() : std::string("-"),
                            TimeText::json);
}

std::optional<long long> write_time(const BodyFields& body, const char* field, long long now_us) {
    std::optional<long long> t = body.opt_time(field);
    if (t && *t > now_us + kMaxFutureUs) {
        const std::string f(field);
        throw invalid_parameter(f, f + " must not be more than 60 seconds in the future");
    }
    return t;
}

WriteTimes create_times(const BodyFields& body, long long now_us) {
    const std::optional<long long> created = write_time(body, "created_at", now_us);
    const std::optional<long long> updated = write_time(body, "updated_at", now_us);
    WriteTimes t;
    if (updated) t.updated_us = *updated;
    else t.updated_us = created ? std::max(now_us, *created) : now_us;
    t.created_us = created ? *created : t.updated_us;
    if (t.updated_us < t.created_us)
        throw invalid_parameter("updated_at", "updated_at must not be earlier than created_at");
    return t;
}

}  // namespace notesd
