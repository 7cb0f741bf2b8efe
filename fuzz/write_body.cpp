// The bodies of the write endpoints (notes and collections, contract section 10) as the handlers
// read them: parse_body_object (content-type rule, empty body as {} where every field is
// optional, the strict reader) and then BodyFields for every field a write reads. The first
// input byte picks the content type and whether an empty body counts as {}; the rest is the body.
// Properties: the only errors are 415 (a non-JSON type), 400 INVALID_JSON exactly when the text
// is not an RFC 8259 object, and 400 INVALID_PARAMETER naming the field being read; what a reader
// returns keeps its rule (UTF-8 without NUL within the character limits, canonical uuids without
// duplicates, integers in range, times within the future allowance and created <= updated).
#include <json/json.h>

#include <functional>
#include <set>

#include "api/body_fields.hpp"
#include "base/json_check.hpp"
#include "base/util.hpp"
#include "fuzz_check.hpp"

using namespace notesd;

namespace {

constexpr long long kNowUs = 1767225600LL * 1000000;  // 2026-01-01T00:00:00Z: reproducible runs
constexpr const char* kContentTypes[] = {"", "application/json", "Application/JSON ; charset=utf-8",
                                         "text/plain"};

void check_text(const std::string& s, std::size_t min_chars, std::size_t max_chars) {
    FUZZ_CHECK(valid_utf8(s) && s.find('\0') == std::string::npos, "a string read");
    const std::size_t n = utf8_length(s);
    FUZZ_CHECK(n >= min_chars && n <= max_chars, std::to_string(n) + " characters");
}

void check_uuid(const std::string& u) {
    FUZZ_CHECK(parse_uuid(u) && *parse_uuid(u) == u, "not a canonical uuid: " + u);
}

// Runs one field reader: it returns (and read() checks the value) or names its field in a 400.
void field(const char* name, const std::function<void()>& read) {
    try {
        read();
    } catch (const ApiError& e) {
        notesd_fuzz::expect_error(e, 400, "INVALID_PARAMETER");
        FUZZ_CHECK(e.field() == name, std::string(name) + " read, " + e.field() + " named");
    }
}

void read_fields(const BodyFields& b) {
    field("content", [&] { check_text(b.req_string("content", 0, 200000), 0, 200000); });
    field("title", [&] { if (auto t = b.opt_string("title", 1, 1000)) check_text(*t, 1, 1000); });
    field("description", [&] {
        if (auto d = b.opt_string("description", 0, 10000)) check_text(*d, 0, 10000);
    });
    field("id", [&] { if (auto id = b.opt_uuid("id")) check_uuid(*id); });
    field("collection_ids", [&] {
        const std::vector<std::string> ids = b.uuid_array("collection_ids", 100);
        FUZZ_CHECK(ids.size() <= 100 && std::set<std::string>(ids.begin(), ids.end()).size() == ids.size(),
                   "collection_ids");
        for (const auto& id : ids) check_uuid(id);
    });
    field("collection_titles", [&] {
        const std::vector<std::string> titles = b.string_array("collection_titles", 100, 1000);
        FUZZ_CHECK(titles.size() <= 100, "collection_titles");
        for (const auto& t : titles) check_text(t, 1, 1000);
    });
    field("version", [&] {
        const long long v = b.req_int("version", 1, 9007199254740991LL);
        FUZZ_CHECK(v >= 1 && v <= 9007199254740991LL, std::to_string(v));
    });
    field("target_collection_id", [&] { check_uuid(b.req_uuid("target_collection_id")); });
}

void read_times(const BodyFields& b) {
    try {
        const WriteTimes t = create_times(b, kNowUs);
        FUZZ_CHECK(t.created_us <= t.updated_us, "created after updated");
        FUZZ_CHECK(t.updated_us <= kNowUs + kMaxFutureUs, "updated_at beyond the allowance");
    } catch (const ApiError& e) {
        notesd_fuzz::expect_error(e, 400, "INVALID_PARAMETER");
        FUZZ_CHECK(e.field() == "created_at" || e.field() == "updated_at", e.field());
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    HttpRequest req;
    req.content_type = kContentTypes[data[0] & 3];
    const bool empty_is_object = (data[0] & 4) != 0;
    req.body.assign(notesd_fuzz::as_text(data + 1, size - 1));
    const bool blank = req.body.find_first_not_of(" \t\r\n") == std::string::npos;
    const bool object = !blank && !check_json_text(req.body, 64, true) &&
                        req.body[req.body.find_first_not_of(" \t\r\n")] == '{';
    Json::Value body;
    try {
        body = parse_body_object(req, empty_is_object);
    } catch (const ApiError& e) {
        if (e.status() == 415) {
            notesd_fuzz::expect_error(e, 415, "UNSUPPORTED_MEDIA_TYPE");
            FUZZ_CHECK(req.content_type == std::string("text/plain"), "415 for " + req.content_type);
            return 0;
        }
        notesd_fuzz::expect_error(e, 400, "INVALID_JSON");
        FUZZ_CHECK(!(blank && empty_is_object), "an empty body where {} is allowed");
        FUZZ_CHECK(!object || e.message().find("a number out of range") != std::string::npos,
                   "a valid object was rejected: " + e.message());
        return 0;
    }
    FUZZ_CHECK(req.content_type != std::string("text/plain"), "text/plain accepted");
    FUZZ_CHECK(object || (blank && empty_is_object), "accepted what RFC 8259 (or the object rule) rejects");
    FUZZ_CHECK(body.isObject(), "not an object");
    const BodyFields b(body);
    read_fields(b);
    read_times(b);
    return 0;
}
