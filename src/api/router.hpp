// (method, path) -> endpoint; unknown paths are 404, known paths with another method 405 + Allow.
#pragma once
#include <string_view>

namespace notesd {

enum class Endpoint { ListNotes, ListCollections, SearchNotes };

/// Every endpoint, in the enum's order: the metrics count requests per endpoint_index().
constexpr Endpoint kAllEndpoints[] = {Endpoint::ListNotes, Endpoint::ListCollections,
                                      Endpoint::SearchNotes};
constexpr int kEndpointCount = static_cast<int>(sizeof kAllEndpoints / sizeof kAllEndpoints[0]);
constexpr int endpoint_index(Endpoint e) { return static_cast<int>(e); }
/// The metrics label: "list_notes", "list_collections", "search_notes".
const char* endpoint_name(Endpoint e);

/// Throws ApiError 404 NOT_FOUND or 405 METHOD_NOT_ALLOWED (with an Allow header).
Endpoint route(std::string_view method, std::string_view path);

}  // namespace notesd
