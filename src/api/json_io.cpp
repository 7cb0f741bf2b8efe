#include "api/json_io.hpp"

#include <memory>

#include "api/errors.hpp"
#include "base/util.hpp"

namespace notesd {
namespace {

// jsoncpp's strict mode still skips comments inside objects; '/' outside a string is never JSON.
bool has_comment(std::string_view body) {
    bool in_string = false;
    for (std::size_t i = 0; i < body.size(); ++i) {
        char c = body[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '/') {
            return true;
        }
    }
    return false;
}

}  // namespace

Json::Value parse_json_object(std::string_view body) {
    static const std::unique_ptr<Json::CharReader> reader = [] {
        Json::CharReaderBuilder b;
        Json::CharReaderBuilder::strictMode(&b.settings_);
        b["stackLimit"] = 64;
        return std::unique_ptr<Json::CharReader>(b.newCharReader());
    }();
    if (!valid_utf8(body)) throw ApiError(400, "INVALID_JSON", "the request body is not valid UTF-8");
    if (has_comment(body))
        throw ApiError(400, "INVALID_JSON", "the request body must be a JSON object");
    Json::Value root;
    std::string errs;
    bool ok = false;
    try {
        ok = reader->parse(body.data(), body.data() + body.size(), &root, &errs);
    } catch (const Json::Exception&) {
        ok = false;
    }
    if (!ok || !root.isObject())
        throw ApiError(400, "INVALID_JSON", "the request body must be a JSON object");
    return root;
}

}  // namespace notesd
