// The note side of the write API (contract section 10) as two store roles:
//  - NoteEditor: one note by id (live or trashed), create, update under a version check, and
//    the change of created_at;
//  - NoteTrash: trash, restore, and the ids of the trashed notes (export).
// NoteWriter::delete_note deletes live and trashed notes alike. Each write is one transaction
// under the user's writer lock that keeps the note's derived fields, collection links, every
// maintained count and the search index in step (the import's write path). "Not found" and
// conflicts are results, not exceptions.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/model.hpp"

namespace notesd {

/// One note as a read by id shows it.
struct NoteRecord {
    std::string id;
    std::string title;
    std::string content;
    long long version = 1;
    long long created_us = 0;
    long long updated_us = 0;
    std::optional<long long> trashed_us;  ///< set while the note is in the trash
    std::vector<std::string> collection_ids;
    std::vector<std::string> audio_recording_ids;
    std::vector<Attachment> attachments;  ///< in document order
};

enum class NoteWriteStatus {
    Done,
    NotFound,              ///< the user has no such note (another user's is the same)
    IdTaken,               ///< create: the user already has a note (live or trashed) with this id
    VersionConflict,       ///< update: the expected version is not the current one
    Trashed,               ///< update / created_at of a trashed note
    UpdatedBeforeCreated,  ///< update: updated_us earlier than the note's created_us
    NotEarlier,            ///< created_at: not earlier than the current value
};

struct NoteWriteResult {
    NoteWriteStatus status = NoteWriteStatus::Done;
    /// The note after the write (Done), or as it is (VersionConflict, UpdatedBeforeCreated,
    /// NotEarlier: for the error message).
    NoteRecord note;
};

class NoteEditor {
public:
    virtual ~NoteEditor() = default;
    /// The user's note with this id, live or trashed.
    virtual std::optional<NoteRecord> find_note(long long user_id, const std::string& note_id) = 0;
    /// (id, title) of every collection of the user, for matching collection titles.
    virtual std::vector<std::pair<std::string, std::string>> collection_titles(long long user_id) = 0;
    /// Inserts n (derived and index fields filled in) with version 1; collection ids the user
    /// does not have are left out. Done or IdTaken.
    virtual NoteWriteResult create_note(long long user_id, const NoteInput& n) = 0;
    /// Replaces the content and derived fields of the live note n.id when its version is
    /// expected_version; keeps created_at and the collection links (n's are ignored) and
    /// stores version expected_version + 1.
    virtual NoteWriteResult update_note(long long user_id, const NoteInput& n,
                                        long long expected_version) = 0;
    /// Moves created_at of a live note earlier; version and updated_at stay.
    virtual NoteWriteResult set_note_created(long long user_id, const std::string& note_id,
                                             long long created_us) = 0;
};

class NoteTrash {
public:
    virtual ~NoteTrash() = default;
    /// Moves a live note out of every list, count and index into the trash (true also when it
    /// is there already); false when the user has no such note.
    virtual bool trash_note(long long user_id, const std::string& note_id, long long now_us) = 0;
    /// Brings a trashed note back with its version and the links whose collections still
    /// exist (true also when it is live); false when the user has no such note.
    virtual bool restore_note(long long user_id, const std::string& note_id) = 0;
    /// Ids of the user's trashed notes, most recently updated first (then id descending).
    virtual std::vector<std::string> trashed_note_ids(long long user_id) = 0;
};

}  // namespace notesd
