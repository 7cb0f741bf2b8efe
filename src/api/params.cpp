#include "api/params.hpp"

#include <algorithm>
#include <cstring>

#include "api/errors.hpp"
#include "api/query_string.hpp"
#include "base/util.hpp"

namespace notesd {
namespace {

// The contains_* filters, any of which a note may match: the list endpoint's query parameter
// and the search body's field of each.
struct FlagFilter {
    const char* query_name;
    const char* body_name;
    int flag;
};
constexpr FlagFilter kFlagFilters[] = {
    {"contains_open_tasks", "filter_by_contains_open_tasks", kFlagOpenTasks},
    {"contains_tasks", "filter_by_contains_tasks", kFlagTasks},
    {"contains_images", "filter_by_contains_images", kFlagImages},
    {"contains_files", "filter_by_contains_files", kFlagFiles},
};

std::string range_text(long long min, long long max) {
    return "an integer from " + std::to_string(min) + " to " + std::to_string(max);
}

// Reads the four date bounds shared by both list endpoints.
void read_bounds(const QueryArgs& q, TimeRange& created, TimeRange& updated) {
    struct Bound {
        const char* name;
        long long* slot;
    } bounds[] = {{"filter_by_created_after", &created.min_us},
                  {"filter_by_created_before", &created.max_us},
                  {"filter_by_updated_after", &updated.min_us},
                  {"filter_by_updated_before", &updated.max_us}};
    for (const Bound& b : bounds)
        if (auto v = q.get(b.name))
            if (auto t = parse_time_param(b.name, *v, TimeText::query_string)) *b.slot = *t;
}

int read_limit(const QueryArgs& q) {
    if (auto v = q.get("limit"))
        if (auto n = parse_int_param("limit", *v, 1, 100)) return static_cast<int>(*n);
    return 50;
}

OrderBy read_order(const QueryArgs& q) {
    if (auto v = q.get("order_by")) return parse_order_by(*v);
    return OrderBy::UpdatedAt;
}

std::optional<std::string> read_page(const QueryArgs& q) {
    auto v = q.get("page");
    if (!v || v->empty()) return std::nullopt;
    return v;
}

void append_range(std::string& s, const char* name, const TimeRange& r) {
    s += '|';
    s += name;
    s += '=';
    s += std::to_string(r.min_us);
    s += ',';
    s += std::to_string(r.max_us);
}

const char* order_name(OrderBy o) { return o == OrderBy::CreatedAt ? "created_at" : "updated_at"; }

}  // namespace

std::optional<long long> parse_int_param(std::string_view field, const std::string& text,
                                         long long min, long long max) {
    if (text.empty()) return std::nullopt;
    std::string f(field);
    long long v = 0;
    bool ok = text.size() <= 18;
    for (char c : text) {
        if (c < '0' || c > '9') ok = false;
        if (ok) v = v * 10 + (c - '0');
    }
    if (!ok || v < min || v > max) throw invalid_parameter(f, f + " must be " + range_text(min, max));
    return v;
}

bool parse_bool_param(std::string_view field, const std::string& text) {
    std::string lower;
    for (char c : text) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    if (lower == "true" || lower == "1") return true;
    if (lower == "false" || lower == "0") return false;
    std::string f(field);
    throw invalid_parameter(f, f + " must be true, false, 1 or 0");
}

std::optional<long long> parse_time_param(std::string_view field, const std::string& text,
                                          TimeText from) {
    if (text.empty()) return std::nullopt;
    if (from == TimeText::query_string || text.find(' ') == std::string::npos)
        if (auto t = parse_time(text)) return t;
    std::string f(field);
    throw invalid_parameter(f, f + " must be an RFC 3339 date-time with a time zone offset, "
                                   "e.g. 2025-05-04T14:20:11Z");
}

std::optional<std::string> parse_uuid_param(std::string_view field, const std::string& text) {
    if (text.empty()) return std::nullopt;
    if (auto u = parse_uuid(text)) return u;
    std::string f(field);
    throw invalid_parameter(f, f + " must be a UUID such as 3f0c1c2e-8a51-4c8e-9a43-2f1d7a6b9c01");
}

OrderBy parse_order_by(const std::string& text) {
    if (text == "updated_at") return OrderBy::UpdatedAt;
    if (text == "created_at") return OrderBy::CreatedAt;
    throw invalid_parameter("order_by", "order_by must be created_at or updated_at");
}

ListNotesCommand parse_list_notes(const QueryArgs& q) {
    ListNotesCommand c;
    c.limit = read_limit(q);
    c.order_by = read_order(q);
    c.page = read_page(q);
    if (auto v = q.get("collection_id"))
        c.filter.collection_id = parse_uuid_param("collection_id", *v);
    read_bounds(q, c.filter.created, c.filter.updated);
    for (const auto& f : kFlagFilters)
        if (auto v = q.get(f.query_name))
            if (parse_bool_param(f.query_name, *v)) c.filter.flags_any |= f.flag;
    if (auto v = q.get("include_note_content"))
        c.include_content = parse_bool_param("include_note_content", *v);
    return c;
}

ListCollectionsCommand parse_list_collections(const QueryArgs& q) {
    ListCollectionsCommand c;
    c.limit = read_limit(q);
    c.order_by = read_order(q);
    c.page = read_page(q);
    read_bounds(q, c.filter.created, c.filter.updated);
    return c;
}

std::string ListNotesCommand::scope() const {
    std::string s = "notes|o=";
    s += order_name(order_by);
    s += "|c=";
    s += filter.collection_id.value_or("");
    append_range(s, "cr", filter.created);
    append_range(s, "up", filter.updated);
    s += "|f=" + std::to_string(filter.flags_any);
    return s;
}

std::string ListCollectionsCommand::scope() const {
    std::string s = "collections|o=";
    s += order_name(order_by);
    append_range(s, "cr", filter.created);
    append_range(s, "up", filter.updated);
    return s;
}

}  // namespace notesd

namespace notesd {
namespace {

constexpr std::size_t kMaxQueryChars = 1000;
constexpr std::size_t kMaxCollectionIds = 100;

const Json::Value* member(const Json::Value& obj, const char* key) {
    const Json::Value* v = obj.find(key, key + std::strlen(key));
    return v && !v->isNull() ? v : nullptr;  // null means "not given"
}

// A pagination value from the body as the text the query-string parser would have seen.
std::optional<std::string> body_integer(const Json::Value& body, const char* key, long long min,
                                        long long max) {
    const Json::Value* v = member(body, key);
    if (!v) return std::nullopt;
    std::string k(key);
    if (!v->isIntegral() || (v->isInt64() ? v->asInt64() : max + 1) < min ||
        (v->isInt64() ? v->asInt64() : max + 1) > max)
        throw invalid_parameter(k, k + " must be " + range_text(min, max));
    return std::to_string(v->asInt64());
}

// A pagination value from the query string, validated and in the form body_integer gives, so
// that "020" and 20 agree.
std::optional<std::string> query_integer(const QueryArgs& q, const char* key, long long min,
                                         long long max) {
    std::optional<std::string> v = q.get(key);
    if (!v || v->empty()) return std::nullopt;
    return std::to_string(*parse_int_param(key, *v, min, max));
}

// Query string and body may both carry a pagination parameter; they must then agree.
std::optional<std::string> merged(const char* key, std::optional<std::string> from_query,
                                  std::optional<std::string> from_body) {
    if (from_query && from_query->empty()) from_query.reset();
    if (from_query && from_body && *from_query != *from_body) {
        std::string k(key);
        throw invalid_parameter(k, k + " is given in the query string and the body with different values");
    }
    return from_query ? from_query : from_body;
}

bool body_bool(const Json::Value& body, const char* key, const std::string& field) {
    const Json::Value* v = member(body, key);
    if (!v) return false;
    if (!v->isBool()) throw invalid_parameter(field, field + " must be true or false");
    return v->asBool();
}

std::optional<long long> body_time(const Json::Value& body, const char* key) {
    const Json::Value* v = member(body, key);
    if (!v) return std::nullopt;
    if (!v->isString()) return parse_time_param(key, "not a string", TimeText::json);
    return parse_time_param(key, v->asString(), TimeText::json);
}

}  // namespace

SearchCommand parse_search(const QueryArgs& q, const Json::Value& body) {
    SearchCommand c;
    if (auto v = merged("limit", query_integer(q, "limit", 1, 50), body_integer(body, "limit", 1, 50)))
        c.limit = static_cast<int>(*parse_int_param("limit", *v, 1, 50));
    if (auto v = merged("offset", query_integer(q, "offset", 0, 999999999999999LL),
                        body_integer(body, "offset", 0, 999999999999999LL)))
        c.offset = *parse_int_param("offset", *v, 0, 999999999999999LL);
    std::optional<std::string> snap_body;
    if (const Json::Value* v = member(body, "snapshot_id")) {
        if (!v->isString()) throw invalid_parameter("snapshot_id", "snapshot_id must be a UUID string");
        snap_body = v->asString().empty() ? std::nullopt : std::optional<std::string>(v->asString());
    }
    std::optional<std::string> snap_query = q.get("snapshot_id");
    if (snap_query) snap_query = parse_uuid_param("snapshot_id", *snap_query);
    if (snap_body) snap_body = parse_uuid_param("snapshot_id", *snap_body);
    c.snapshot_id = merged("snapshot_id", snap_query, snap_body);
    if (c.offset > 0 && !c.snapshot_id)
        throw invalid_parameter("offset", "offset must be 0 unless snapshot_id from a previous "
                                          "response is given");

    const Json::Value* query = body.find("query", "query" + 5);
    if (!query || !query->isString())
        throw invalid_parameter("query", "query is required and must be a string");
    c.query = query->asString();
    if (c.query.find_first_not_of(" \t\r\n\f\v") == std::string::npos)
        throw invalid_parameter("query", "query must contain at least one non-whitespace character");
    if (!valid_utf8(c.query) || utf8_length(c.query) > kMaxQueryChars)
        throw invalid_parameter("query", "query must be at most 1000 characters of UTF-8 text");

    if (const Json::Value* ids = member(body, "filter_by_collection_ids")) {
        const std::string f = "filter_by_collection_ids";
        if (!ids->isArray()) throw invalid_parameter(f, f + " must be an array of UUIDs");
        if (ids->size() > kMaxCollectionIds)
            throw invalid_parameter(f, f + " must hold at most 100 UUIDs");
        for (const Json::Value& id : *ids) {
            std::optional<std::string> u = id.isString() ? parse_uuid(id.asString()) : std::nullopt;
            if (!u) throw invalid_parameter(f, f + " must be an array of UUIDs");
            c.filter.collection_ids.push_back(*u);
        }
        std::sort(c.filter.collection_ids.begin(), c.filter.collection_ids.end());
        c.filter.collection_ids.erase(
            std::unique(c.filter.collection_ids.begin(), c.filter.collection_ids.end()),
            c.filter.collection_ids.end());
    }
    if (auto t = body_time(body, "filter_by_created_after")) c.filter.created.min_us = *t;
    if (auto t = body_time(body, "filter_by_created_before")) c.filter.created.max_us = *t;
    if (auto t = body_time(body, "filter_by_updated_after")) c.filter.updated.min_us = *t;
    if (auto t = body_time(body, "filter_by_updated_before")) c.filter.updated.max_us = *t;
    for (const auto& f : kFlagFilters)
        if (body_bool(body, f.body_name, f.body_name)) c.filter.flags_any |= f.flag;
    if (const Json::Value* config = member(body, "config")) {
        if (!config->isObject()) throw invalid_parameter("config", "config must be an object");
        // The older clients' name for the same switch; the current name wins when both are given.
        if (member(*config, "include_note_content"))
            c.include_content = body_bool(*config, "include_note_content", "config.include_note_content");
        else
            c.include_content = body_bool(*config, "include_content", "config.include_content");
    }
    return c;
}

std::string SearchCommand::filter_scope() const {
    std::string s = "c=";
    for (const std::string& id : filter.collection_ids) s += id + ",";
    append_range(s, "cr", filter.created);
    append_range(s, "up", filter.updated);
    s += "|f=" + std::to_string(filter.flags_any);
    return s;
}

}  // namespace notesd
