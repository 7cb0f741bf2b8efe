// Domain values shared by handlers, the store and the admin tool. Times are UTC epoch microseconds.
#pragma once
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace notesd {

enum class OrderBy { UpdatedAt, CreatedAt };

/// Bits of Note::flags, set at write time from the markdown.
constexpr int kFlagOpenTasks = 1;
constexpr int kFlagTasks = 2;
constexpr int kFlagImages = 4;
constexpr int kFlagFiles = 8;
/// Every bit of Note::flags; the flags values are 0..kAllFlags.
constexpr int kAllFlags = kFlagOpenTasks | kFlagTasks | kFlagImages | kFlagFiles;

constexpr long long kMinTime = std::numeric_limits<long long>::min();
constexpr long long kMaxTime = std::numeric_limits<long long>::max();

/// Inclusive time bounds; the defaults mean "no bound".
struct TimeRange {
    long long min_us = kMinTime;
    long long max_us = kMaxTime;
    bool operator==(const TimeRange& o) const { return min_us == o.min_us && max_us == o.max_us; }
};

struct NoteFilter {
    std::optional<std::string> collection_id;  // canonical lowercase uuid
    TimeRange created;
    TimeRange updated;
    int flags_any = 0;                         // OR of kFlag*; 0 = no flag filter
};

struct CollectionFilter {
    TimeRange created;
    TimeRange updated;
};

/// Keyset position: the sort value and id of the last row of the previous page.
struct PageKey {
    long long sort_us = 0;
    std::string id;
};

/// What a token may do (contract section 7): a read-only token's write is 403.
enum class TokenScope { ReadWrite, ReadOnly };

struct Principal {
    long long user_id = 0;
    long long token_id = 0;
    TokenScope scope = TokenScope::ReadWrite;
};

struct NoteItem {
    std::string id;
    std::string title;
    std::string snippet;
    std::optional<std::string> content;
    long long created_us = 0;
    long long updated_us = 0;
    std::vector<std::string> collection_ids;
    std::vector<std::string> audio_recording_ids;
};

struct CollectionItem {
    std::string id;
    std::string title;
    std::optional<std::string> description;
    long long created_us = 0;
    long long updated_us = 0;
    long long note_count = 0;
};

enum class AttachmentKind { Image, File, Audio };

struct Attachment {
    std::string id;       // uuid
    AttachmentKind kind = AttachmentKind::File;
    std::string target;   // path or URL as written in the note
};

/// A note as the importer hands it to the store; derived fields already computed.
struct NoteInput {
    std::string id;                        // uuid
    std::string title;
    std::string snippet;
    std::string content;
    long long created_us = 0;
    long long updated_us = 0;
    int flags = 0;
    std::vector<std::string> collection_ids;  // uuids of the same user's collections
    std::vector<Attachment> attachments;
    // The body as plain text (markdown removed): search snippets, and with the title what the
    // note is indexed under (the store analyses both, index/note_index.hpp).
    std::string plain_text;
};

struct CollectionInput {
    std::string id;                        // uuid
    std::string title;
    std::optional<std::string> description;
    long long created_us = 0;
    long long updated_us = 0;
};

struct UserInfo {
    long long id = 0;
    std::string name;
    long long created_us = 0;
    long long note_count = 0;
    long long collection_count = 0;
};

struct TokenInfo {
    long long id = 0;
    long long user_id = 0;
    std::string label;
    std::string prefix;                    // first characters, for recognising a token
    long long created_us = 0;
    std::optional<long long> revoked_us;
    TokenScope scope = TokenScope::ReadWrite;
};

enum class WriteOutcome { Inserted, Updated, Unchanged };

/// Structured filters of a search, applied in SQL before any ranking cut.
struct SearchFilter {
    std::vector<std::string> collection_ids;  // canonical uuids; a note in any of them; empty: all
    TimeRange created;
    TimeRange updated;
    int flags_any = 0;
};

/// Per-user corpus statistics for ranking (another user's notes never enter them).
struct SearchCorpus {
    long long notes = 0;
    long long title_tokens = 0;  // sum of title_len over the user's notes
    long long body_tokens = 0;   // sum of body_len
};

/// A note that contains a term: the candidate-finding unit.
/// Where a note sits in every term's postings: its updated_us and its uuid as util.hpp's
/// uuid_halves. Unique per user, even for notes updated in the same microsecond.
struct PostingNote {
    long long updated_us = 0, uid_hi = 0, uid_lo = 0;
};

struct TermPosting {
    long long uid_hi = 0, uid_lo = 0;  ///< the note's uuid as util.hpp's uuid_halves
    long long updated_us = 0;
    int title_tf = 0, body_tf = 0;    ///< occurrences of the term in the note's title and body
    int title_len = 0, body_len = 0;  ///< the note's field lengths in terms
    std::string positions;  ///< where the term occurs (positions.hpp); empty: unknown
};

/// What ranking reads of a candidate.
struct IndexedNote {
    std::string id;
    long long updated_us = 0;
    std::string title_terms;
    std::string body_terms;
};

/// A stored search result window (contract section 5).
struct SnapshotRecord {
    std::string id;             // random uuid (122 random bits)
    long long user_id = 0;
    std::string fingerprint;    // canonical query + filters; reuse with another one is a 400
    long long created_us = 0;
    long long expires_us = 0;
    std::vector<std::string> note_ids;  // ranked, at most 100
};

/// A search result item: the list item plus the plain text used for the query-aware snippet.
struct SearchHit {
    NoteItem note;
    std::string plain_text;
};

}  // namespace notesd
