// The index's merge policy (issue 19): which bounded step keeps a user's search index small
// next. Pure (no I/O): SociStore's compact_index (notesctl pack) and the background merger
// (server/merger.hpp) ask it for one step at a time and run it, the store bounding how long a
// step holds the user's writer lock (store/segments.hpp).
//
// Tiered, as Lucene's policy: postings rows (API writes) are folded into a small segment once
// there are enough of them or the oldest has waited long enough, a bounded number of notes per
// step; segments of one size tier (sizes within a factor of merge_factor of each other) are
// merged once merge_factor of them gather, so a note is rewritten about log(N) times; a
// segment mostly of dead notes is rewritten without them; past max_segments the smallest are
// merged whatever their tiers. A due fold goes first while the user has at most max_segments,
// else after the merges of dead notes and full tiers, and past twice max_segments after the
// smallest-first merge too: writes that keep a fold due at every step do not starve merges.
#pragma once
#include <cstddef>
#include <vector>

namespace notesd {

struct MergePolicy {
    long long fold_min_notes = 64;            ///< fold once this many notes have postings rows
    long long fold_delay_us = 30000000;       ///< or once the first of them waited this long
    long long fold_batch_notes = 32;          ///< notes folded per step at most
    /// and postings: a step stops adding notes once it has this many (it deletes a row per
    /// posting with the user locked, about 3-6 us each on SQLite here)
    long long fold_batch_postings = 2000;
    /// The same bounds for pending entries (API writes), which a step folds with the user locked
    /// only to publish (store/soci_compact.cpp): larger, so that the blocks and term_df pages a
    /// fold rewrites are shared by more notes.
    long long fold_pending_notes = 128;
    long long fold_pending_postings = 16000;
    /// The background merger sizes each fold of pending entries so that its publish holds the
    /// user's lock about this long (next_fold_budget): a term change costs well under a
    /// microsecond on SQLite and about ten on PostgreSQL, so one fixed size cannot fit both.
    long long fold_publish_target_us = 12000;
    long long fold_pending_postings_min = 500;  ///< the smallest budget it shrinks to
    std::size_t merge_factor = 4;             ///< segments of one tier merged together
    long long tier_floor_notes = 64;          ///< live notes of the smallest tier's top
    /// more: the smallest are merged, tiers aside (while a fold is due: more than twice this)
    std::size_t max_segments = 8;
    /// notesctl pack: fold every row now and merge down to max_segments without waiting for a
    /// tier to fill.
    bool force = false;
    /// index_behind: this many pending notes (about four folds) or more
    long long behind_pending_notes = 512;
};

/// A segment as the policy sees it.
struct SegmentStat {
    long long id = 0;
    long long notes = 0, live = 0;
};

/// The user's index as the policy sees it.
struct IndexState {
    long long pending_notes = 0;          ///< notes whose postings are rows (capped by the store)
    std::vector<SegmentStat> segments;    ///< oldest first
};

/// One step: fold `fold_pending_notes` pending entries, or else `fold_notes` notes' rows, into a
/// new segment, or merge the segments `merge` into one (never both); neither when the index is
/// as the policy wants it.
struct MergePlan {
    long long fold_notes = 0;
    long long fold_postings = 0;  ///< the fold stops adding notes once it has this many
    long long fold_pending_notes = 0, fold_pending_postings = 0;  ///< the same for pending entries
    std::vector<long long> merge;  ///< segment ids, in the state's order
    bool idle() const { return fold_notes == 0 && merge.empty(); }
};

/// pending_since_us: when the caller first saw rows pending (0: unknown, as now).
/// The postings budget (MergePolicy::fold_pending_postings) of the merger's next fold of pending
/// entries, after a fold of `postings` term changes whose publish held the lock `publish_us`:
/// the number of changes that would take fold_publish_target_us at that rate, at once when it
/// is smaller than `budget`, growing at most twice a step and only after a fold that used at
/// least half its budget; always within [fold_pending_postings_min, fold_pending_postings].
long long next_fold_budget(const MergePolicy& p, long long budget, long long postings,
                           long long publish_us);

MergePlan plan_merge(const MergePolicy& p, const IndexState& s, long long pending_since_us,
                     long long now_us);

/// Whether the index is behind what the policy wants: behind_pending_notes or more pending, or
/// more than twice max_segments segments (where a due fold waits for every merge). The
/// background merger then works at the workers' CPU priority (server/merger_priority.hpp).
bool index_behind(const MergePolicy& p, const IndexState& s);

}  // namespace notesd
