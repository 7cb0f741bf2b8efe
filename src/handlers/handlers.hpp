// Endpoint handlers: parse -> store -> render. No SQL, no FastCGI.
#pragma once
#include "../http.hpp"
#include "../model.hpp"

namespace notesd {

class Store;
class CursorCodec;

/// GET /v2/notes (contract section 3).
HttpResponse list_notes(const HttpRequest& req, const Principal& who, Store& store,
                        const CursorCodec& cursors);
/// GET /v2/collections (contract section 4).
HttpResponse list_collections(const HttpRequest& req, const Principal& who, Store& store,
                              const CursorCodec& cursors);

}  // namespace notesd
