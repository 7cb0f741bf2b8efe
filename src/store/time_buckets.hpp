// The time buckets of the maintained note counts (schema 011's note_time_counts): each note is
// counted once per time column (created_us, updated_us), per level and per flags value, in the
// bucket floor(time / 2^shift) of that level. An inclusive time range is covered exactly by
// whole buckets of the coarsest levels that fit, finer ones towards its ends, and at most two
// edge pieces shorter than a finest bucket, which the caller counts in the notes themselves.
#pragma once
#include <array>

namespace notesd::detail {

/// The levels' bucket widths as powers of two microseconds, finest first: 2^32 us (72 minutes),
/// 2^36 (19 hours), 2^40 (12.7 days), 2^44 (203 days), 2^48 (8.9 years). Each is 16 times the
/// previous one, so a range needs at most 30 buckets of a level below the top (15 on each side
/// of the coarser ones). Changing them changes what schema 011 stored (a new migration would
/// refill the table).
constexpr std::array<int, 5> kTimeCountShifts = {32, 36, 40, 44, 48};
constexpr int kTimeCountLevels = static_cast<int>(kTimeCountShifts.size());
constexpr int kLevelRatioBits = 4;  // kTimeCountShifts[i + 1] - kTimeCountShifts[i]

/// floor(us / 2^shift), also for negative times.
long long time_bucket(long long us, int shift);
/// The first and last microsecond of a bucket.
long long bucket_first_us(long long bucket, int shift);
long long bucket_last_us(long long bucket, int shift);

/// Inclusive buckets [first, last] of one level; empty when first > last.
struct BucketSpan {
    long long first = 1, last = 0;
    bool empty() const { return first > last; }
};

/// Inclusive microseconds [min_us, max_us]; empty when min_us > max_us.
struct TimeSpan {
    long long min_us = 1, max_us = 0;
    bool empty() const { return min_us > max_us; }
};

/// The exact cover of an inclusive time range: a fixed shape, so one prepared statement can sum
/// it. Level i < top contributes spans[2i] and spans[2i + 1] (its buckets before and after the
/// coarser level's), the top level spans[2 * top]; edges are the uncovered ends.
struct TimeCover {
    static constexpr int kSpans = 2 * kTimeCountLevels - 1;
    std::array<BucketSpan, kSpans> spans;
    std::array<TimeSpan, 2> edges;
    /// The level (index into kTimeCountShifts) of spans[i].
    static int level_of(int span) { return span / 2; }
};

/// Covers [min_us, max_us] (empty when min_us > max_us: nothing is covered).
TimeCover cover_time_range(long long min_us, long long max_us);

}  // namespace notesd::detail
