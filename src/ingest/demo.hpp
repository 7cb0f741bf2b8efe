// Deterministic demo data: generated markdown notes in about ten collections, with open and
// closed tasks, images, file links and audio attachments, over a year of times.
#pragma once
#include <vector>

#include "base/model.hpp"
#include "store/store.hpp"

namespace notesd {

struct DemoData {
    std::vector<CollectionInput> collections;
    std::vector<NoteInput> notes;  // derived fields computed; collection_ids refer to the above
};

/// The same (user_id, notes, seed) always gives the same data, byte for byte.
DemoData build_demo(long long user_id, int notes = 1200, unsigned seed = 1);
/// Writes build_demo's data in batches of 200; re-running it changes nothing.
void generate_demo(NoteWriter& writer, long long user_id, int notes = 1200, unsigned seed = 1);

}  // namespace notesd
