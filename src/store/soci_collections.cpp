// SociStore's collection role (collection_editor.hpp): one collection by id, its writes, and
// the links between notes and collections. Every write runs under the user's lock in one
// transaction and changes, together: collections.note_count, users.collection_count,
// note_collections (the rows list pages and the search's collection filter read) and
// notes.collection_uuids (the list a note carries). Links change neither a note's version nor
// its updated_at (API.md), so the postings, whose key holds updated_at, stay as they are.
#include "store/soci_collections.hpp"

#include <algorithm>
#include <vector>

#include "store/soci_stmt.hpp"
#include "store/soci_store.hpp"

namespace notesd {
namespace detail {

CollectionStatements::CollectionStatements(soci::session& s, const Dialect& d)
    : collection_get(Prep(s, "SELECT id, title, description, created_us, updated_us, note_count "
                             "FROM collections WHERE user_id = :u AND uuid = :uuid")
                         .out(collection_id).out(title).out(description, description_ind)
                         .out(created_us).out(updated_us).out(note_count).in(user_id, "u")
                         .in(collection_uuid, "uuid").done()),
      collection_insert(Prep(s, "INSERT INTO collections (user_id, uuid, title, description, "
                                "created_us, updated_us, note_count) VALUES (:u, :uuid, :title, "
                                ":description, :created, :updated, 0)")
                            .in(user_id, "u").in(collection_uuid, "uuid").in(title, "title")
                            .in(description, description_ind, "description")
                            .in(created_us, "created").in(updated_us, "updated")
                            .returning_id(d, inserted_id).done()),
      collection_update(Prep(s, "UPDATE collections SET title = :title, description = "
                                ":description, updated_us = :updated WHERE id = :cid")
                            .in(title, "title").in(description, description_ind, "description")
                            .in(updated_us, "updated").in(collection_id, "cid").done()),
      collection_delete(Prep(s, "DELETE FROM collections WHERE id = :cid")
                            .in(collection_id, "cid").done()),
      note_count_add(Prep(s, "UPDATE collections SET note_count = note_count + :delta WHERE "
                             "id = :cid")
                         .in(count_delta, "delta").in(collection_id, "cid").done()),
      user_collections_add(Prep(s, "UPDATE users SET collection_count = collection_count + "
                                   ":delta WHERE id = :u")
                               .in(count_delta, "delta").in(user_id, "u").done()),
      live_note(Prep(s, "SELECT id, created_us, updated_us, flags, collection_uuids FROM notes "
                        "WHERE user_id = :u AND uuid = :nuuid")
                    .out(note_id).out(note_created_us).out(note_updated_us).out(note_flags)
                    .out(note_collections).in(user_id, "u").in(note_uuid, "nuuid").done()),
      link_find(Prep(s, "SELECT note_id FROM note_collections WHERE collection_id = :cid AND "
                        "note_id = :nid")
                    .out(linked_note_id).in(collection_id, "cid").in(note_id, "nid").done()),
      link_insert(Prep(s, "INSERT INTO note_collections (collection_id, note_id, note_uuid, "
                          "created_us, updated_us, flags) VALUES (:cid, :nid, :nuuid, :created, "
                          ":updated, :flags)")
                      .in(collection_id, "cid").in(note_id, "nid").in(note_uuid, "nuuid")
                      .in(note_created_us, "created").in(note_updated_us, "updated")
                      .in(note_flags, "flags").done()),
      link_delete(Prep(s, "DELETE FROM note_collections WHERE collection_id = :cid AND "
                          "note_id = :nid")
                      .in(collection_id, "cid").in(note_id, "nid").done()),
      notes_of_collection(Prep(s, "SELECT n.id, n.collection_uuids FROM note_collections nc JOIN "
                                  "notes n ON n.id = nc.note_id WHERE nc.collection_id = :cid")
                              .out(note_id).out(note_collections).in(collection_id, "cid").done()),
      links_of_collection_delete(Prep(s, "DELETE FROM note_collections WHERE collection_id = :cid")
                                     .in(collection_id, "cid").done()),
      // The import's content hash covered the old list: cleared, a re-import of the same
      // source is an update again (it restores the source's links) instead of "unchanged".
      note_collections_set(Prep(s, "UPDATE notes SET collection_uuids = :colls, content_hash = "
                                   "'' WHERE id = :nid")
                               .in(note_collections, "colls").in(note_id, "nid").done()),
      // Trashed notes (schema 008) keep their links for a restore: a deleted collection
      // leaves their lists too.
      trashed_with_collection(Prep(s, "SELECT uuid, collection_uuids FROM trashed_notes WHERE "
                                      "user_id = :u AND collection_uuids LIKE :pattern")
                                  .out(note_uuid).out(note_collections).in(user_id, "u")
                                  .in(trashed_pattern, "pattern").done()),
      trashed_collections_set(Prep(s, "UPDATE trashed_notes SET collection_uuids = :colls WHERE "
                                      "user_id = :u AND uuid = :nuuid")
                                  .in(note_collections, "colls").in(user_id, "u")
                                  .in(note_uuid, "nuuid").done()) {}

}  // namespace detail

namespace {

using detail::CollectionStatements;
using detail::exec;
using detail::fetch_one;

// The comma-joined list with `drop` removed and `add` appended (when not there yet); either
// may be empty.
std::string edit_list(const std::string& list, const std::string& drop, const std::string& add) {
    std::vector<std::string> ids = detail::split_list(list, ',');
    if (!drop.empty()) ids.erase(std::remove(ids.begin(), ids.end(), drop), ids.end());
    if (!add.empty() && std::find(ids.begin(), ids.end(), add) == ids.end()) ids.push_back(add);
    return detail::join_list(ids, ',');
}

CollectionItem item_of(const CollectionStatements& c, const std::string& id) {
    CollectionItem item{id, c.title, std::nullopt, c.created_us, c.updated_us, c.note_count};
    if (c.description_ind == soci::i_ok) item.description = c.description;
    return item;
}

// Reads the user's collection into c (its id in c.collection_id).
bool find_collection_row(CollectionStatements& c, long long user_id, const std::string& id) {
    c.user_id = user_id;
    c.collection_uuid = id;
    return fetch_one(c.collection_get);
}

// Reads the user's live note into c (its id, sort keys and collection list).
bool find_note_row(CollectionStatements& c, long long user_id, const std::string& id) {
    c.user_id = user_id;
    c.note_uuid = id;
    return fetch_one(c.live_note);
}

// Both ends of a link must exist; leaves the collection and the note read into c.
CollectionWrite find_link_ends(CollectionStatements& c, long long user_id,
                               const std::string& collection_id, const std::string& note_id) {
    if (!find_collection_row(c, user_id, collection_id)) return CollectionWrite::NoCollection;
    if (!find_note_row(c, user_id, note_id)) return CollectionWrite::NoNote;
    return CollectionWrite::Done;
}

bool linked(CollectionStatements& c) { return fetch_one(c.link_find); }

// Links c.note_id to c.collection_id, or unlinks it, with the collection's count.
void change_link(CollectionStatements& c, bool link) {
    exec(link ? c.link_insert : c.link_delete);
    c.count_delta = link ? 1 : -1;
    exec(c.note_count_add);
}

// Removes the collection from the lists of its notes (live and trashed).
void drop_from_note_lists(CollectionStatements& c, long long user_id, const std::string& id) {
    // Read all first: the statement's rows must not change under it.
    std::vector<std::pair<long long, std::string>> notes;
    c.notes_of_collection.execute();
    while (c.notes_of_collection.fetch()) notes.emplace_back(c.note_id, c.note_collections);
    detail::end_read(c.notes_of_collection);
    for (const auto& [note, list] : notes) {
        c.note_id = note;
        c.note_collections = edit_list(list, id, "");
        exec(c.note_collections_set);
    }
    c.user_id = user_id;
    c.trashed_pattern = "%" + id + "%";
    std::vector<std::pair<std::string, std::string>> trashed;
    c.trashed_with_collection.execute();
    while (c.trashed_with_collection.fetch()) trashed.emplace_back(c.note_uuid, c.note_collections);
    detail::end_read(c.trashed_with_collection);
    for (const auto& [note, list] : trashed) {
        c.note_uuid = note;
        c.note_collections = edit_list(list, id, "");
        exec(c.trashed_collections_set);
    }
}

}  // namespace

CollectionStatements& SociStore::collection_statements() {
    if (!collections_) collections_ = std::make_unique<CollectionStatements>(sql_, *dialect_);
    return *collections_;
}

std::optional<CollectionItem> SociStore::find_collection(long long user_id,
                                                         const std::string& collection_id) {
    return reading("find_collection", [&]() -> std::optional<CollectionItem> {
        CollectionStatements& c = collection_statements();
        if (!find_collection_row(c, user_id, collection_id)) return std::nullopt;
        return item_of(c, collection_id);
    });
}

CollectionWrite SociStore::create_collection(long long user_id, const CollectionInput& in) {
    return locked_write("create_collection", user_id, [&] {
        CollectionStatements& c = collection_statements();
        if (find_collection_row(c, user_id, in.id)) return CollectionWrite::Conflict;
        c.title = in.title;
        c.description = in.description.value_or("");
        c.description_ind = in.description ? soci::i_ok : soci::i_null;
        c.created_us = in.created_us;
        c.updated_us = in.updated_us;
        run_insert(c.collection_insert, "collections", c.inserted_id);
        c.count_delta = 1;
        exec(c.user_collections_add);
        return CollectionWrite::Done;
    });
}

CollectionWrite SociStore::update_collection(long long user_id, const std::string& collection_id,
                                             const CollectionPatch& p, CollectionItem* out) {
    return locked_write("update_collection", user_id, [&] {
        CollectionStatements& c = collection_statements();
        if (!find_collection_row(c, user_id, collection_id)) return CollectionWrite::NoCollection;
        if (p.updated_us < c.created_us) return CollectionWrite::UpdatedBeforeCreated;
        if (p.title) c.title = *p.title;
        if (p.description) {
            c.description_ind = *p.description ? soci::i_ok : soci::i_null;
            c.description = p.description->value_or("");
        }
        c.updated_us = p.updated_us;
        exec(c.collection_update);
        if (out) *out = item_of(c, collection_id);
        return CollectionWrite::Done;
    });
}

CollectionWrite SociStore::delete_collection(long long user_id, const std::string& collection_id) {
    return locked_write("delete_collection", user_id, [&] {
        CollectionStatements& c = collection_statements();
        if (!find_collection_row(c, user_id, collection_id)) return CollectionWrite::NoCollection;
        const long long row = c.collection_id;
        drop_from_note_lists(c, user_id, collection_id);
        c.collection_id = row;
        exec(c.links_of_collection_delete);
        exec(c.collection_delete);
        c.user_id = user_id;
        c.count_delta = -1;
        exec(c.user_collections_add);
        return CollectionWrite::Done;
    });
}

CollectionWrite SociStore::link_note(long long user_id, const std::string& collection_id,
                                     const std::string& note_id) {
    return locked_write("link_note", user_id, [&] {
        CollectionStatements& c = collection_statements();
        const CollectionWrite ends = find_link_ends(c, user_id, collection_id, note_id);
        if (ends != CollectionWrite::Done || linked(c)) return ends;
        change_link(c, true);
        c.note_collections = edit_list(c.note_collections, "", collection_id);
        exec(c.note_collections_set);
        return CollectionWrite::Done;
    });
}

CollectionWrite SociStore::unlink_note(long long user_id, const std::string& collection_id,
                                       const std::string& note_id) {
    return locked_write("unlink_note", user_id, [&] {
        CollectionStatements& c = collection_statements();
        const CollectionWrite ends = find_link_ends(c, user_id, collection_id, note_id);
        if (ends != CollectionWrite::Done || !linked(c)) return ends;
        change_link(c, false);
        c.note_collections = edit_list(c.note_collections, collection_id, "");
        exec(c.note_collections_set);
        return CollectionWrite::Done;
    });
}

CollectionWrite SociStore::move_note(long long user_id, const std::string& source,
                                     const std::string& note_id, const std::string& target) {
    return locked_write("move_note", user_id, [&] {
        CollectionStatements& c = collection_statements();
        if (!find_collection_row(c, user_id, source)) return CollectionWrite::NoCollection;
        const long long source_row = c.collection_id;
        if (!find_collection_row(c, user_id, target)) return CollectionWrite::NoTarget;
        const long long target_row = c.collection_id;
        if (!find_note_row(c, user_id, note_id)) return CollectionWrite::NoNote;
        c.collection_id = source_row;
        if (!linked(c)) return CollectionWrite::NotLinked;
        if (source == target) return CollectionWrite::Done;
        change_link(c, false);
        c.collection_id = target_row;
        if (!linked(c)) change_link(c, true);
        c.note_collections = edit_list(c.note_collections, source, target);
        exec(c.note_collections_set);
        return CollectionWrite::Done;
    });
}

}  // namespace notesd
