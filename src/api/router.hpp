// (method, path) -> endpoint; unknown paths are 404, known paths with another method 405 + Allow.
#pragma once
#include <string_view>

namespace notesd {

enum class Endpoint { ListNotes, ListCollections, SearchNotes };

/// Throws ApiError 404 NOT_FOUND or 405 METHOD_NOT_ALLOWED (with an Allow header).
Endpoint route(std::string_view method, std::string_view path);

}  // namespace notesd
