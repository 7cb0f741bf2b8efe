// Endpoint handlers: parse -> store -> render. No SQL, no FastCGI.
#pragma once
#include "api/http.hpp"
#include "base/model.hpp"

namespace notesd {

class NoteReader;
class SearchStore;
class ReadViews;
class CollectionEditor;
class NoteEditor;
class NoteTrash;
class NoteWriter;
class CursorCodec;
struct Route;

/// GET /v2/notes (contract section 3): a first page's total and rows read in one view.
HttpResponse list_notes(const HttpRequest& req, const Principal& who, NoteReader& notes,
                        ReadViews& views, const CursorCodec& cursors);
struct SearchSettings {
    long long snapshot_ttl_s = 900;
};

/// POST /v2/notes/search (contract section 5).
HttpResponse search_notes(const HttpRequest& req, const Principal& who, SearchStore& store,
                          const SearchSettings& settings);
// One note by id and the note writes (contract section 10); route.params[0] is the note id.
/// GET /v2/notes/{note_id}: ETag, and 304 for a matching If-None-Match. The note's row, links
/// and attachments read in one view.
HttpResponse get_note(const HttpRequest& req, const Route& route, const Principal& who,
                      NoteEditor& store, ReadViews& views);
/// POST /v2/notes
HttpResponse create_note(const HttpRequest& req, const Principal& who, NoteEditor& store);
/// PATCH /v2/notes/{note_id}
HttpResponse update_note(const HttpRequest& req, const Route& route, const Principal& who,
                         NoteEditor& store);
/// DELETE /v2/notes/{note_id} (a live or a trashed note)
HttpResponse delete_note(const HttpRequest& req, const Route& route, const Principal& who,
                         NoteWriter& store);
/// POST /v2/notes/{note_id}/trash
HttpResponse trash_note(const HttpRequest& req, const Route& route, const Principal& who,
                        NoteTrash& store);
/// POST /v2/notes/{note_id}/restore
HttpResponse restore_note(const HttpRequest& req, const Route& route, const Principal& who,
                          NoteTrash& store);
/// PATCH /v2/notes/{note_id}/created-at
HttpResponse set_note_created(const HttpRequest& req, const Route& route, const Principal& who,
                              NoteEditor& store);

/// GET /v2/collections (contract section 4): a first page's total and rows read in one view.
HttpResponse list_collections(const HttpRequest& req, const Principal& who, NoteReader& notes,
                              ReadViews& views, const CursorCodec& cursors);

// Collections (collections_write.cpp, contract section 10).
HttpResponse create_collection(const HttpRequest& req, const Principal& who,
                               CollectionEditor& store);
HttpResponse get_collection(const HttpRequest& req, const Route& route, const Principal& who,
                            CollectionEditor& store);
HttpResponse update_collection(const HttpRequest& req, const Route& route, const Principal& who,
                               CollectionEditor& store);
HttpResponse delete_collection(const HttpRequest& req, const Route& route, const Principal& who,
                               CollectionEditor& store);
HttpResponse search_collections(const HttpRequest& req, const Principal& who, NoteReader& notes,
                                ReadViews& views);
HttpResponse link_note(const HttpRequest& req, const Route& route, const Principal& who,
                       CollectionEditor& store);
HttpResponse unlink_note(const HttpRequest& req, const Route& route, const Principal& who,
                         CollectionEditor& store);
HttpResponse move_note(const HttpRequest& req, const Route& route, const Principal& who,
                       CollectionEditor& store);

// Related notes and extended search (related.cpp, contract section 10).
HttpResponse related_notes(const HttpRequest& req, const Route& route, const Principal& who,
                           SearchStore& store);
HttpResponse extended_search(const HttpRequest& req, const Principal& who, SearchStore& store,
                             const CursorCodec& cursors);

}  // namespace notesd
