#include "api/router.hpp"

#include <string>

#include "api/errors.hpp"

namespace notesd {
namespace {

struct RouteEntry {
    const char* path;
    const char* method;
    Endpoint endpoint;
};

constexpr RouteEntry kRoutes[] = {
    {"/v2/notes", "GET", Endpoint::ListNotes},
    {"/v2/collections", "GET", Endpoint::ListCollections},
    {"/v2/notes/search", "POST", Endpoint::SearchNotes},
};

}  // namespace

const char* endpoint_name(Endpoint e) {
    switch (e) {
    case Endpoint::ListNotes: return "list_notes";
    case Endpoint::ListCollections: return "list_collections";
    case Endpoint::SearchNotes: return "search_notes";
    }
    return "unknown";
}

Endpoint route(std::string_view method, std::string_view path) {
    for (const RouteEntry& r : kRoutes) {
        if (path != r.path) continue;
        if (method == r.method) return r.endpoint;
        ApiError e(405, "METHOD_NOT_ALLOWED",
                   std::string(r.path) + " supports only " + r.method);
        e.headers.emplace_back("Allow", r.method);
        throw e;
    }
    throw ApiError(404, "NOT_FOUND", "no such endpoint; see the API documentation for /v2");
}

}  // namespace notesd
