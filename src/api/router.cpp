#include "api/router.hpp"

#include <string>

#include "api/errors.hpp"

namespace notesd {
namespace {

struct RouteEntry {
    const char* pattern;  // "/v2/notes/{note_id}": a {name} segment matches any non-empty one
    const char* method;
    Endpoint endpoint;
    bool writes;
};

// Literal paths come before the patterns that would also match them (/v2/notes/search is not a
// note id); the methods of one path are listed together, in the order Allow names them.
constexpr RouteEntry kRoutes[] = {
    {"/v2/notes", "GET", Endpoint::ListNotes, false},
    {"/v2/notes", "POST", Endpoint::CreateNote, true},
    {"/v2/collections", "GET", Endpoint::ListCollections, false},
    {"/v2/collections", "POST", Endpoint::CreateCollection, true},
    {"/v2/notes/search", "POST", Endpoint::SearchNotes, false},
    {"/v2/notes/extended-search", "POST", Endpoint::ExtendedSearch, false},
    {"/v2/collections/search", "POST", Endpoint::SearchCollections, false},
    {"/v2/notes/{note_id}", "GET", Endpoint::GetNote, false},
    {"/v2/notes/{note_id}", "PATCH", Endpoint::UpdateNote, true},
    {"/v2/notes/{note_id}", "DELETE", Endpoint::DeleteNote, true},
    {"/v2/notes/{note_id}/trash", "POST", Endpoint::TrashNote, true},
    {"/v2/notes/{note_id}/restore", "POST", Endpoint::RestoreNote, true},
    {"/v2/notes/{note_id}/created-at", "PATCH", Endpoint::SetNoteCreated, true},
    {"/v2/notes/{note_id}/related-notes", "GET", Endpoint::RelatedNotes, false},
    {"/v2/collections/{collection_id}", "GET", Endpoint::GetCollection, false},
    {"/v2/collections/{collection_id}", "PATCH", Endpoint::UpdateCollection, true},
    {"/v2/collections/{collection_id}", "DELETE", Endpoint::DeleteCollection, true},
    {"/v2/collections/{collection_id}/notes/{note_id}", "PUT", Endpoint::LinkNote, true},
    {"/v2/collections/{collection_id}/notes/{note_id}", "DELETE", Endpoint::UnlinkNote, true},
    {"/v2/collections/{source_collection_id}/notes/{note_id}/move", "POST", Endpoint::MoveNote,
     true},
};

// Matches path against pattern segment by segment; the {name} segments go to params.
bool matches(std::string_view pattern, std::string_view path, std::vector<std::string>& params) {
    params.clear();
    while (!pattern.empty() || !path.empty()) {
        if (pattern.empty() || path.empty() || pattern[0] != '/' || path[0] != '/') return false;
        pattern.remove_prefix(1);
        path.remove_prefix(1);
        const std::string_view pseg = pattern.substr(0, pattern.find('/'));
        const std::string_view seg = path.substr(0, path.find('/'));
        if (pseg.size() > 2 && pseg.front() == '{' && pseg.back() == '}') {
            if (seg.empty()) return false;
            params.emplace_back(seg);
        } else if (pseg != seg) {
            return false;
        }
        pattern.remove_prefix(pseg.size());
        path.remove_prefix(seg.size());
    }
    return true;
}

}  // namespace

const char* endpoint_name(Endpoint e) {
    switch (e) {
        case Endpoint::ListNotes: return "list_notes";
        case Endpoint::ListCollections: return "list_collections";
        case Endpoint::SearchNotes: return "search_notes";
        case Endpoint::GetNote: return "get_note";
        case Endpoint::CreateNote: return "create_note";
        case Endpoint::UpdateNote: return "update_note";
        case Endpoint::DeleteNote: return "delete_note";
        case Endpoint::TrashNote: return "trash_note";
        case Endpoint::RestoreNote: return "restore_note";
        case Endpoint::SetNoteCreated: return "set_note_created";
        case Endpoint::CreateCollection: return "create_collection";
        case Endpoint::GetCollection: return "get_collection";
        case Endpoint::UpdateCollection: return "update_collection";
        case Endpoint::DeleteCollection: return "delete_collection";
        case Endpoint::SearchCollections: return "search_collections";
        case Endpoint::LinkNote: return "link_note";
        case Endpoint::UnlinkNote: return "unlink_note";
        case Endpoint::MoveNote: return "move_note";
        case Endpoint::RelatedNotes: return "related_notes";
        case Endpoint::ExtendedSearch: return "extended_search";
    }
    return "unknown";
}

Route route(std::string_view method, std::string_view path) {
    std::vector<std::string> params;
    const char* matched = nullptr;  // the first pattern that matches the path
    std::string allow;
    for (const RouteEntry& r : kRoutes) {
        if (matched ? std::string_view(r.pattern) != matched : !matches(r.pattern, path, params))
            continue;
        matched = r.pattern;
        if (method == r.method) return Route{r.endpoint, params, r.writes};
        allow += (allow.empty() ? "" : ", ") + std::string(r.method);
    }
    if (!matched) throw ApiError(404, "NOT_FOUND", "no such endpoint; see the API documentation for /v2");
    ApiError e(405, "METHOD_NOT_ALLOWED", std::string(matched) + " supports only " + allow);
    e.headers.emplace_back("Allow", allow);
    throw e;
}

std::size_t body_limit(std::string_view method, std::string_view path, std::size_t other) {
    try {
        const Endpoint e = route(method, path).endpoint;
        if (e == Endpoint::CreateNote || e == Endpoint::UpdateNote)
            return other > kNoteBodyBytes ? other : kNoteBodyBytes;
    } catch (const ApiError&) {
        // unknown paths and methods keep the general limit
    }
    return other;
}

}  // namespace notesd
