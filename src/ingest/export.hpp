// Export of one user's notes and collections, the inverse of import (import.hpp): a file
// written here and imported into an empty database exports again byte for byte.
#pragma once
#include <string>

#include "store/store.hpp"

namespace notesd {

enum class ExportFormat {
    Jsonl,     ///< one file: every collection, then every note (import's JSON Lines shapes)
    Markdown,  ///< a new folder: one <note id>.md per note, with front matter
};

struct ExportReport {
    long long notes = 0;    ///< live and trashed
    long long trashed = 0;
    long long collections = 0;
};

/// Writes the user's data to `path` (a file for Jsonl, written whole or not at all; a folder
/// that must not exist yet, or be empty, for Markdown). Items come in list order: updated_at,
/// then id, newest first; trashed notes follow the live ones, with `trashed_at`. Everything is
/// read in one view (`views`): the user's data as one committed state, however the API writes
/// meanwhile (a walk of pages alone would miss a note updated after its first page). Throws
/// std::runtime_error when `path` cannot be written.
ExportReport export_user(NoteReader& reader, NoteTrash& trash, NoteEditor& notes, ReadViews& views,
                         long long user_id, ExportFormat format, const std::string& path);

/// "exported N notes (T trashed), C collections"
std::string format_export_summary(const ExportReport& report);

}  // namespace notesd
