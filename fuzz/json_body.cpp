// JSON request bodies: the strict reader (check_json_text + jsoncpp, reached through
// parse_body_object as the search handler calls it) and the search command read from it. The
// reader throws only 400 INVALID_JSON, and exactly when the text is not an RFC 8259 object without
// duplicate keys (check_json_text is the oracle, jsoncpp the parser); every string it lets through
// is valid UTF-8; parse_search throws only 400 errors. (Found by it: 1e400 is RFC 8259 but jsoncpp
// refuses it, which the reader reported as "must be an object".) Write bodies: write_body.cpp.
#include <json/json.h>

#include "api/body_fields.hpp"
#include "api/json_io.hpp"
#include "api/params.hpp"
#include "api/query_string.hpp"
#include "base/json_check.hpp"
#include "base/util.hpp"
#include "fuzz_check.hpp"

using namespace notesd;

namespace {
void all_utf8(const Json::Value& v) {
    if (v.isString()) {
        const char* b = nullptr;
        const char* e = nullptr;
        v.getString(&b, &e);
        FUZZ_CHECK(valid_utf8(std::string_view(b, static_cast<std::size_t>(e - b))), "a string");
    } else if (v.isObject()) {
        for (const auto& name : v.getMemberNames()) {
            FUZZ_CHECK(valid_utf8(name), "a key");
            all_utf8(v[name]);
        }
    } else if (v.isArray()) {
        for (const auto& item : v) all_utf8(item);
    }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    const std::string_view text = notesd_fuzz::as_text(data, size);
    const bool rfc_ok = !check_json_text(text, 64, true);
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    const bool object = rfc_ok && text[first] == '{';
    HttpRequest req;
    req.content_type = "application/json";
    req.body.assign(text);
    Json::Value body;
    try {
        body = parse_body_object(req, false);
    } catch (const ApiError& e) {
        notesd_fuzz::expect_error(e, 400, "INVALID_JSON");
        // The one limit past the grammar (besides depth): numbers must fit a double.
        FUZZ_CHECK(!object || e.message().find("a number out of range") != std::string::npos,
                   "a valid object was rejected: " + e.message());
        return 0;
    }
    FUZZ_CHECK(object, "accepted what RFC 8259 (or the object rule) rejects");
    FUZZ_CHECK(body.isObject(), "not an object");
    all_utf8(body);
    try {
        const SearchCommand cmd = parse_search(QueryArgs(""), body);
        FUZZ_CHECK(cmd.limit >= 1 && cmd.limit <= 100, std::to_string(cmd.limit));
        FUZZ_CHECK(cmd.offset >= 0, std::to_string(cmd.offset));
        FUZZ_CHECK(valid_utf8(cmd.query) && !cmd.query.empty(), cmd.query);
        FUZZ_CHECK(valid_utf8(cmd.filter_scope()), "filter_scope");
    } catch (const ApiError& e) {
        FUZZ_CHECK(e.status() == 400, std::to_string(e.status()) + " " + e.kind());
        FUZZ_CHECK(!e.message().empty(), e.kind());
    }
    return 0;
}
