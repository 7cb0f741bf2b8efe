// Import of a folder of markdown files (front matter, folders as collections) or of a JSON
// Lines file of Mem-shaped notes and collections, written through NoteWriter::write_batch.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/front_matter.hpp"
#include "ingest/markdown.hpp"
#include "base/model.hpp"
#include "store/store.hpp"

namespace notesd {

struct ImportOptions {
    // Notes per write_batch transaction, or fewer when their text reaches batch_bytes first.
    // Each commit rewrites the index pages its postings touch, so fewer, larger batches write
    // the postings B-tree fewer times; but a batch holds the database's write lock, and API
    // writes wait for it only up to their busy timeout (doc/benchmarks.md, "Larger import
    // batches").
    std::size_t batch_size = 5000;
    /// Bytes of text (content and derived fields) per batch; an import holds two batches at
    /// once, the one being written and the next (BatchWriter's pipeline).
    std::size_t batch_bytes = 64u << 20;
    bool progress = false;         // one updating line on stderr (notesctl: when it is a tty)
    /// Compact the user's search index at the end (NoteWriter::compact_index): the last small
    /// batch's rows into a segment, the batches' segments merged.
    bool compact = true;
    /// Where notes marked trashed (JSON Lines `trashed_at`, front matter `trashed_at`, as
    /// export writes them) go once written; without it they are imported as live notes.
    NoteTrash* trash = nullptr;
};

/// A problem with one source file or JSON line; the rest of the import goes on.
struct ImportIssue {
    std::string path;
    long line = 0;  // 1-based line of a .jsonl file, 0 for a whole file
    std::string reason;
};

struct ImportReport {
    long long notes_new = 0;
    long long notes_updated = 0;
    long long notes_unchanged = 0;
    long long collections = 0;      // collections written (new, updated or unchanged)
    std::vector<ImportIssue> errors;
    std::vector<std::pair<std::string, long long>> trashed;  // (note id, trashed_at) to trash
    long long notes() const { return notes_new + notes_updated + notes_unchanged; }
};

/// Imports a folder of .md files (recursively) or a .jsonl file for the user. Throws
/// std::runtime_error when PATH itself cannot be used, and rethrows store failures (the
/// batches already written stay consistent; a re-run completes the import).
ImportReport import_path(NoteWriter& store, long long user_id, const std::string& path,
                         ImportOptions options = {});

/// "imported N notes (I new, U updated, S unchanged), C collections, E errors"
std::string format_summary(const ImportReport& report);
/// "path: reason" or "path:line: reason"
std::string format_issue(const ImportIssue& issue);

// --- building blocks, public for tests and the demo generator ---

/// Attachments for the local links of a note, with ids stable per (user, note, target).
std::vector<Attachment> local_attachments(long long user_id, const std::string& note_id,
                                          const std::vector<LinkRef>& links);
/// A note ready for Store::write_batch (or the API's note writes): derived fields (title unless
/// explicit_title, snippet, flags), local attachments with stable ids, and the search fields.
NoteInput make_note(long long user_id, std::string id, std::string content,
                    const std::optional<std::string>& explicit_title, long long created_us,
                    long long updated_us, std::vector<std::string> collection_ids);
/// Id of a collection identified by its title or folder path, stable per user.
std::string collection_uuid(long long user_id, std::string_view path);

}  // namespace notesd
