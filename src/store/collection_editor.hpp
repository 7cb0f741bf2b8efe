// The collection side of the write API (contract section 10) as a store role: one collection
// by id, its writes, and the links between notes and collections. Each write is one
// transaction under the user's writer lock; it keeps collections.note_count,
// users.collection_count, the notes' collection lists and note_collections (which list pages
// and the search's collection filter read) in step. Outcomes are results, not exceptions.
#pragma once
#include <optional>
#include <string>

#include "base/model.hpp"

namespace notesd {

/// A PATCH of a collection: absent members stay as they are.
struct CollectionPatch {
    std::optional<std::string> title;
    /// set: the new description, or nullopt inside to clear it (the API's "")
    std::optional<std::optional<std::string>> description;
    long long updated_us = 0;  ///< always written (the server's clock when the client gave none)
};

enum class CollectionWrite {
    Done,
    NoCollection,          ///< the user has no collection with this id
    NoTarget,              ///< move: the user has no collection with the target id
    NoNote,                ///< the user has no live note with this id (trashed notes are not linkable)
    NotLinked,             ///< move: the note is not linked to the source collection
    Conflict,              ///< create: the user already has a collection with this id
    UpdatedBeforeCreated,  ///< update: updated_us would be earlier than the stored created_us
};

class CollectionEditor {
public:
    virtual ~CollectionEditor() = default;
    /// The user's collection with this (canonical) id, with its note_count.
    virtual std::optional<CollectionItem> find_collection(long long user_id,
                                                          const std::string& collection_id) = 0;
    /// Done or Conflict. c.id is canonical; created_us <= updated_us (the caller checked).
    virtual CollectionWrite create_collection(long long user_id, const CollectionInput& c) = 0;
    /// Done (and *out filled) or NoCollection / UpdatedBeforeCreated.
    virtual CollectionWrite update_collection(long long user_id, const std::string& collection_id,
                                              const CollectionPatch& p, CollectionItem* out) = 0;
    /// Done or NoCollection. Removes the collection and its links; the notes stay.
    virtual CollectionWrite delete_collection(long long user_id,
                                              const std::string& collection_id) = 0;
    /// Done (also when already linked), NoCollection or NoNote.
    virtual CollectionWrite link_note(long long user_id, const std::string& collection_id,
                                      const std::string& note_id) = 0;
    /// Done (also when not linked), NoCollection or NoNote.
    virtual CollectionWrite unlink_note(long long user_id, const std::string& collection_id,
                                        const std::string& note_id) = 0;
    /// Links the note to `target` and unlinks it from `source` in one transaction. Done (source
    /// equal to target: nothing changes), NoCollection, NoTarget, NoNote or NotLinked.
    virtual CollectionWrite move_note(long long user_id, const std::string& source,
                                      const std::string& note_id, const std::string& target) = 0;
};

}  // namespace notesd
