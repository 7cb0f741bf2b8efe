#include "params.hpp"

#include "errors.hpp"
#include "query_string.hpp"
#include "util.hpp"

namespace notesd {
namespace {

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
            if (auto t = parse_time_param(b.name, *v)) *b.slot = *t;
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

std::optional<long long> parse_time_param(std::string_view field, const std::string& text) {
    if (text.empty()) return std::nullopt;
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
    static const struct {
        const char* name;
        int flag;
    } kFlags[] = {{"contains_open_tasks", kFlagOpenTasks},
                  {"contains_tasks", kFlagTasks},
                  {"contains_images", kFlagImages},
                  {"contains_files", kFlagFiles}};
    for (const auto& f : kFlags)
        if (auto v = q.get(f.name))
            if (parse_bool_param(f.name, *v)) c.filter.flags_any |= f.flag;
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
