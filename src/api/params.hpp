// Typed parsing and validation of every API parameter, in one place.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include <json/value.h>

#include "base/model.hpp"

namespace notesd {

class QueryArgs;

struct ListNotesCommand {
    int limit = 50;
    OrderBy order_by = OrderBy::UpdatedAt;
    NoteFilter filter;
    bool include_content = false;
    std::optional<std::string> page;  // raw cursor text
    /// Canonical form of the endpoint, order_by and every effective filter (binds cursors).
    std::string scope() const;
};

struct ListCollectionsCommand {
    int limit = 50;
    OrderBy order_by = OrderBy::UpdatedAt;
    CollectionFilter filter;
    std::optional<std::string> page;
    std::string scope() const;
};

struct SearchCommand {
    int limit = 20;
    long long offset = 0;
    std::optional<std::string> snapshot_id;
    std::string query;          // as given (validated: non-blank, at most 1,000 characters)
    SearchFilter filter;        // collection ids sorted and de-duplicated
    bool include_content = false;
    /// Canonical filters (the query's canonical form is added by the search service).
    std::string filter_scope() const;
};

ListNotesCommand parse_list_notes(const QueryArgs& q);
ListCollectionsCommand parse_list_collections(const QueryArgs& q);
/// POST /v2/notes/search: pagination from the query string and/or the body (equal when both),
/// everything else from the body (a JSON object, already parsed).
SearchCommand parse_search(const QueryArgs& q, const Json::Value& body);

// Building blocks, shared with the search endpoint. Each throws ApiError 400 INVALID_PARAMETER
// naming `field` and the allowed values. `text` is the decoded value as given (may be empty).
/// An empty value means "not given" (nullopt).
std::optional<long long> parse_int_param(std::string_view field, const std::string& text,
                                         long long min, long long max);
bool parse_bool_param(std::string_view field, const std::string& text);
/// Where a date-time came from: only a query string turns an unencoded `+` into a space, so only
/// there a space in the offset's place is read as `+` (contract section 1).
enum class TimeText { query_string, json };
/// RFC 3339 with offset; an empty value means "not given".
std::optional<long long> parse_time_param(std::string_view field, const std::string& text,
                                          TimeText from);
/// Canonical lowercase uuid; an empty value means "not given".
std::optional<std::string> parse_uuid_param(std::string_view field, const std::string& text);
OrderBy parse_order_by(const std::string& text);

}  // namespace notesd
