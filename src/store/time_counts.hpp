// The maintained counts of a user's notes per time bucket and flags value (schema 011's
// note_time_counts; the buckets: time_buckets.hpp), so the exact `total` of a note list filtered
// by dates and contains_* flags reads a few dozen count rows and two short index ranges instead
// of every note of the user. The write path records each note's old and new (created, updated,
// flags) here and writes the netted changes in its own transaction; notesctl check recounts.
#pragma once
#include <soci/soci.h>

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/model.hpp"
#include "store/dialect.hpp"
#include "store/time_buckets.hpp"

namespace notesd::detail {

/// What a note contributes to the counts.
struct NoteTimes {
    long long created_us = 0, updated_us = 0, flags = 0;
};

/// note_time_counts.time_column
enum class TimeColumn { Created = 0, Updated = 1 };

class TimeCounts {
public:
    TimeCounts(soci::session& s, const Dialect& d) : sql_(s), d_(d) {}
    TimeCounts(const TimeCounts&) = delete;
    TimeCounts& operator=(const TimeCounts&) = delete;

    // ---- the write path, inside the writer's transaction

    /// Forgets changes recorded by a write that failed before it wrote them.
    void discard() { pending_.clear(); }
    /// Records a note's change: `before` leaves its buckets (nullptr: a new note), `after`
    /// enters its buckets (nullptr: the note is gone).
    void note_changed(const NoteTimes* before, const NoteTimes* after);
    /// Writes the recorded changes of the user, netted per row, and forgets them. Rows that
    /// reach zero are deleted; a decrease of a missing or smaller row throws (the counts were
    /// out of step with the notes).
    void write(long long user_id);

    // ---- reads

    /// The number of the user's notes matching f (f.collection_id is not looked at).
    long long count(long long user_id, const NoteFilter& f);

    // ---- notesctl check

    /// The user's rows against a recount from the notes; one line per difference.
    std::vector<std::string> check(long long user_id);

private:
    using RowKey = std::array<long long, 4>;  // time column, shift, bucket, flags
    /// Notes of the user in [range] of one time column having a flag of `mask` (0: any note).
    long long covered(long long user_id, TimeColumn c, const TimeRange& range, long long mask);
    /// COUNT over the notes in both ranges, reading the index of `by`.
    long long scan(long long user_id, TimeColumn by, const NoteFilter& f);
    static void add_rows(std::map<RowKey, long long>& rows, const NoteTimes& n, long long sign);
    soci::statement& cover_statement(TimeColumn c);
    soci::statement& scan_statement(TimeColumn by);
    void prepare_writes();
    void write_increases(std::vector<std::pair<RowKey, long long>>& rows);
    void write_decrease(const RowKey& key, long long delta);

    soci::session& sql_;
    const Dialect& d_;
    std::map<RowKey, long long> pending_;

    // bound variables of the reads
    struct Bounds {
        long long user_id = 0, mask = 0, result = 0;
        std::array<long long, TimeCover::kSpans> first{}, last{};
        std::array<long long, 2> edge_min{}, edge_max{};
        long long created_min = 0, created_max = 0, updated_min = 0, updated_max = 0;
    } b_;
    std::optional<soci::statement> cover_[2], scan_[2];  // [TimeColumn]

    // bound variables of the writes: a row's key and change; rows of the multi-row upsert
    long long user_id_ = 0;
    RowKey key_{};
    long long delta_ = 0;
    static constexpr std::size_t kUpsertRows = 32;
    std::array<RowKey, kUpsertRows> keys_{};
    std::array<long long, kUpsertRows> deltas_{};
    std::optional<soci::statement> upsert_one_, upsert_many_, delete_if_, add_;
};

}  // namespace notesd::detail
