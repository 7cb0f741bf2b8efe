// Internals of SociStore's collection role (CollectionEditor; soci_collections.cpp): its
// statements and the variables they bind (SOCI binds addresses, so the struct lives behind a
// unique_ptr and never moves).
#pragma once
#include <soci/soci.h>

#include <string>

#include "store/dialect.hpp"

namespace notesd::detail {

struct CollectionStatements {
    CollectionStatements(soci::session& s, const Dialect& d);

    long long user_id = 0, inserted_id = 0, count_delta = 0;
    // the collection read or written
    std::string collection_uuid, title, description;
    soci::indicator description_ind = soci::i_ok;
    long long collection_id = 0, created_us = 0, updated_us = 0, note_count = 0;
    // the note of a link, and its denormalised collection list
    std::string note_uuid, note_collections, trashed_pattern;
    long long note_id = 0, note_created_us = 0, note_updated_us = 0, note_flags = 0;
    long long linked_note_id = 0;

    soci::statement collection_get, collection_insert, collection_update, collection_delete;
    soci::statement note_count_add, user_collections_add;
    soci::statement live_note, link_find, link_insert, link_delete;
    soci::statement notes_of_collection, links_of_collection_delete, note_collections_set;
    soci::statement trashed_with_collection, trashed_collections_set;
};

}  // namespace notesd::detail
