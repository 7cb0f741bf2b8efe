// Endpoint handlers: parse -> store -> render. No SQL, no FastCGI.
#pragma once
#include "api/http.hpp"
#include "base/model.hpp"

namespace notesd {

class NoteReader;
class SearchStore;
class CursorCodec;

/// GET /v2/notes (contract section 3).
HttpResponse list_notes(const HttpRequest& req, const Principal& who, NoteReader& notes,
                        const CursorCodec& cursors);
struct SearchSettings {
    long long snapshot_ttl_s = 900;
};

/// POST /v2/notes/search (contract section 5).
HttpResponse search_notes(const HttpRequest& req, const Principal& who, SearchStore& store,
                          const SearchSettings& settings);
/// GET /v2/collections (contract section 4).
HttpResponse list_collections(const HttpRequest& req, const Principal& who, NoteReader& notes,
                              const CursorCodec& cursors);

}  // namespace notesd
