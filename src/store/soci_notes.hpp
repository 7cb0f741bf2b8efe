// Internals of SociStore's note roles (NoteEditor, NoteTrash; soci_notes.cpp): reading a note
// whole (row, text and attachments) as the write path's input, and the trash (schema 008's
// trashed_notes), with the statements and the variables they bind.
#pragma once
#include <soci/soci.h>

#include <optional>
#include <string>

#include "base/model.hpp"

namespace notesd::detail {

/// A note as stored: the write path's input (derived and index fields as stored), its version,
/// and when it went to the trash (a trashed note).
struct NoteState {
    NoteInput input;
    long long version = 1;
    std::optional<long long> trashed_us;
};

/// The columns of a live note (notes and note_text) or of a trashed_notes row.
struct StoredNoteRow {
    long long row_id = 0, version = 0, created_us = 0, updated_us = 0, flags = 0;
    long long trashed_us = 0;
    std::string title, snippet, content, collection_uuids, audio_uuids;
    std::string attachments;  ///< a trashed note's attachments (encode_attachments)
    std::string plain_text;  ///< as stored (plain_text_codec.hpp)
};

/// Statements of the note roles; prepared together on first use.
struct NoteStatements {
    explicit NoteStatements(soci::session& s);

    long long user_id = 0;
    std::string note_uuid;
    StoredNoteRow row;
    // one attachment of a live note
    std::string attachment_uuid, attachment_kind, attachment_target;
    // one collection (collection_titles), one trashed note's id (trashed_ids)
    std::string collection_uuid, collection_title, trashed_uuid;

    long long uid_hi = 0, uid_lo = 0;  // note_uuid's halves (stored_text)

    soci::statement live_note, live_note_text;
    /// A live note's title, content and stored plain text into row, unless its index entry
    /// is pending.
    soci::statement stored_text;
    soci::statement live_attachments;
    soci::statement trashed_note, trashed_exists, trashed_insert, trashed_delete, trashed_ids;
    soci::statement collection_titles;
};

/// The user's live note, its collection ids as stored (some may name deleted collections).
std::optional<NoteState> load_live_note(NoteStatements& s, long long user_id,
                                        const std::string& uuid);
/// The user's trashed note, its collection ids as stored.
std::optional<NoteState> load_trashed_note(NoteStatements& s, long long user_id,
                                           const std::string& uuid);
/// Writes the trashed_notes row of n (n.trashed_us set).
void insert_trashed_note(NoteStatements& s, long long user_id, const NoteState& n);

}  // namespace notesd::detail
