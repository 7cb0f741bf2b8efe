#include "api/json_io.hpp"

#include <memory>

#include "api/errors.hpp"
#include "base/json_check.hpp"

namespace notesd {
namespace {

// Deeper bodies are refused before jsoncpp recurses into them; no request needs more than a few.
constexpr std::size_t kMaxDepth = 64;

}  // namespace

Json::Value parse_json_object(std::string_view body) {
    static const std::unique_ptr<Json::CharReader> reader = [] {
        Json::CharReaderBuilder b;
        Json::CharReaderBuilder::strictMode(&b.settings_);  // rejectDupKeys, failIfExtra, ...
        b["stackLimit"] = static_cast<int>(kMaxDepth) + 8;  // check_json_text's limit comes first
        return std::unique_ptr<Json::CharReader>(b.newCharReader());
    }();
    // jsoncpp's strict mode still stops at a NUL byte and takes raw control characters in
    // strings; the check rejects everything RFC 8259 does, so jsoncpp only builds the tree.
    if (auto bad = check_json_text(body, kMaxDepth))
        throw ApiError(400, "INVALID_JSON", "the request body is not valid JSON: " + describe(*bad));
    const std::size_t first = body.find_first_not_of(" \t\r\n");
    if (body[first] != '{') throw ApiError(400, "INVALID_JSON", "the request body must be a JSON object");
    Json::Value root;
    std::string errs;
    bool ok = false;
    try {
        ok = reader->parse(body.data(), body.data() + body.size(), &root, &errs);
    } catch (const Json::Exception&) {
        ok = false;
    }
    if (!ok) {
        // The text is valid JSON, so jsoncpp refused a duplicate key (find which, and where) or a
        // number beyond a double's range such as 1e400 (RFC 8259 section 9 allows that limit).
        if (auto dup = check_json_text(body, kMaxDepth, true))
            throw ApiError(400, "INVALID_JSON", "the request body is not valid JSON: " + describe(*dup));
        throw ApiError(400, "INVALID_JSON", "the request body is not valid JSON: a number out of range");
    }
    return root;
}

}  // namespace notesd
