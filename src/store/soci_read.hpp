// The request path's reads of SociStore (NoteReader, TokenLookup): keyset pages and counts of
// notes and collections, and token lookups, with the statements and the variables they bind.
#pragma once
#include <soci/soci.h>

#include <array>
#include <optional>
#include <string>

#include "base/model.hpp"
#include "store/dialect.hpp"

namespace notesd::detail {

/// The bound parameters of a note list or count. A keyset position is (sort value, uuid); the
/// sort value appears twice in the expanded keyset predicate of some dialects, and each
/// placeholder binds one variable, hence the copies.
struct NoteListParams {
    long long user_id = 0, collection_id = 0;
    long long after_sort = 0, after_sort_again = 0;
    std::string after_id;
    long long created_min = 0, created_max = 0, updated_min = 0, updated_max = 0;
    long long flags_any = 0, flags_any_again = 0;
    long long limit = 0;
    long long created_bucket = 0;  // notes.created_bucket (schema 018) of a bucket's range
};

/// One row of a note list (and of a search hit).
struct NoteRow {
    std::string uuid, title, snippet, content, collection_uuids, audio_uuids;
    long long created_us = 0, updated_us = 0;
};

/// Maps a list row to the item list_notes returns (shared by notes_by_ids).
NoteItem to_note(const NoteRow& r, bool with_content);

struct CollectionListParams {
    long long user_id = 0;
    long long after_sort = 0, after_sort_again = 0;
    std::string after_id;
    long long created_min = 0, created_max = 0, updated_min = 0, updated_max = 0;
    long long limit = 0;
};

struct CollectionRow {
    std::string uuid, title, description;
    soci::indicator description_ind = soci::i_ok;
    long long created_us = 0, updated_us = 0, note_count = 0;
};

/// Statements of the request path; the list and count variants are prepared on first use.
struct ReadStatements {
    ReadStatements(soci::session& s, const Dialect& d);
    soci::statement& note_list(OrderBy o, bool in_collection, bool with_content);
    soci::statement& note_count(bool in_collection);
    /// The count of a collection's notes with a flag filter (note_params and flag_values),
    /// dated: with the time bounds of note_params.
    soci::statement& flagged_collection_count(bool dated);
    /// One created-time bucket's page of a note list ordered by updated time (note_params with
    /// created_bucket; notes_by_created_bucket): keys only (bucket_key_*), or whole rows.
    soci::statement& bucket_keys();
    soci::statement& bucket_notes(bool with_content);
    /// The user's oldest or newest created time (created_edge, created_edge_ind: none).
    soci::statement& created_edge_of(bool newest);
    soci::statement& collection_list(OrderBy o);
    soci::statement& collection_count();

    soci::session& session;
    const Dialect& dialect;
    NoteListParams note_params;
    NoteRow note_row;
    CollectionListParams collection_params;
    CollectionRow collection_row;
    long long count = 0;
    long long bucket_key_updated = 0;
    std::string bucket_key_uuid;
    long long created_edge = 0;
    soci::indicator created_edge_ind = soci::i_ok;
    /// The nonzero flags values flagged_collection_count reads; unused slots hold -1.
    std::array<long long, kAllFlags> flag_values{};
    std::string token_hash;
    long long token_user_id = 0, token_id = 0;
    std::string token_scope;  // tokens.scope: token_scope_name's text
    long long user_id = 0;
    std::string collection_uuid;
    long long collection_id = 0, collection_note_count = 0;
    long long user_note_count = 0, user_collection_count = 0;
    soci::statement find_token, find_collection, user_counts;

private:
    // [order is updated_at][in a collection][with content]
    std::optional<soci::statement> note_list_[2][2][2];
    std::optional<soci::statement> note_count_[2];  // [in a collection]
    std::optional<soci::statement> flagged_collection_count_[2];  // [dated]
    std::optional<soci::statement> bucket_keys_, bucket_notes_[2];  // [with content]
    std::optional<soci::statement> created_edge_[2];                // [newest]
    std::optional<soci::statement> collection_list_[2];  // [order is updated_at]
    std::optional<soci::statement> collection_count_;
};

}  // namespace notesd::detail
