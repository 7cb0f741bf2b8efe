// (method, path) -> endpoint and path parameters; unknown paths are 404, known paths with another
// method 405 + Allow.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace notesd {

enum class Endpoint {
    ListNotes,
    ListCollections,
    SearchNotes,
    GetNote,
    CreateNote,
    UpdateNote,
    DeleteNote,
    TrashNote,
    RestoreNote,
    SetNoteCreated,
    CreateCollection,
    GetCollection,
    UpdateCollection,
    DeleteCollection,
    SearchCollections,
    LinkNote,
    UnlinkNote,
    MoveNote,
    RelatedNotes,
    ExtendedSearch,
};

struct Route {
    Endpoint endpoint = Endpoint::ListNotes;
    /// The `{...}` segments of the path in order, as given (handlers validate them).
    std::vector<std::string> params;
    /// A write: a read-only token gets 403 before anything is looked up.
    bool writes = false;
};

/// Every endpoint, in the enum's order: the metrics count requests per endpoint_index().
constexpr Endpoint kAllEndpoints[] = {
    Endpoint::ListNotes,        Endpoint::ListCollections,  Endpoint::SearchNotes,
    Endpoint::GetNote,          Endpoint::CreateNote,       Endpoint::UpdateNote,
    Endpoint::DeleteNote,       Endpoint::TrashNote,        Endpoint::RestoreNote,
    Endpoint::SetNoteCreated,   Endpoint::CreateCollection, Endpoint::GetCollection,
    Endpoint::UpdateCollection, Endpoint::DeleteCollection, Endpoint::SearchCollections,
    Endpoint::LinkNote,         Endpoint::UnlinkNote,       Endpoint::MoveNote,
    Endpoint::RelatedNotes,     Endpoint::ExtendedSearch};
constexpr int kEndpointCount = static_cast<int>(sizeof kAllEndpoints / sizeof kAllEndpoints[0]);
constexpr int endpoint_index(Endpoint e) { return static_cast<int>(e); }
/// The metrics label, the endpoint in snake case: "list_notes", "create_note", "move_note"...
const char* endpoint_name(Endpoint e);

/// Throws ApiError 404 NOT_FOUND or 405 METHOD_NOT_ALLOWED (with an Allow header).
Route route(std::string_view method, std::string_view path);

/// Most bytes a request body may have (contract section 8): note create and update take up to
/// kNoteBodyBytes, everything else (unknown paths included) `other`.
constexpr std::size_t kNoteBodyBytes = 1 << 20;
std::size_t body_limit(std::string_view method, std::string_view path, std::size_t other);

}  // namespace notesd
