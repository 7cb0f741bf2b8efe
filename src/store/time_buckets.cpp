#include "store/time_buckets.hpp"

namespace notesd::detail {

static_assert([] {
    for (int i = 1; i < kTimeCountLevels; ++i)
        if (kTimeCountShifts[i] - kTimeCountShifts[i - 1] != kLevelRatioBits) return false;
    return true;
}(), "each level is 2^kLevelRatioBits times the previous one");

long long time_bucket(long long us, int shift) {
    // Written out for negative times: >> of a negative value is implementation-defined in C++17.
    return us >= 0 ? us >> shift : -((-(us + 1)) >> shift) - 1;
}

long long bucket_first_us(long long bucket, int shift) { return bucket * (1LL << shift); }

long long bucket_last_us(long long bucket, int shift) {
    return bucket * (1LL << shift) + ((1LL << shift) - 1);
}

// The finest level's whole buckets [first, last] go up a level while a coarser bucket fits
// inside; what is left below and above it stays at the level. No arithmetic overflows: the
// finest buckets of the whole int64 range are -2^31 .. 2^31 - 1.
TimeCover cover_time_range(long long min_us, long long max_us) {
    TimeCover c;
    if (min_us > max_us) return c;
    const int s0 = kTimeCountShifts[0];
    const long long fa = time_bucket(min_us, s0), fb = time_bucket(max_us, s0);
    const bool whole_first = min_us == bucket_first_us(fa, s0);
    const bool whole_last = max_us == bucket_last_us(fb, s0);
    if (fa == fb && !(whole_first && whole_last)) {
        c.edges[0] = TimeSpan{min_us, max_us};
        return c;
    }
    if (!whole_first) c.edges[0] = TimeSpan{min_us, bucket_last_us(fa, s0)};
    if (!whole_last) c.edges[1] = TimeSpan{bucket_first_us(fb, s0), max_us};
    long long first = whole_first ? fa : fa + 1;
    long long last = whole_last ? fb : fb - 1;
    const long long ratio = 1LL << kLevelRatioBits;
    for (int level = 0; first <= last; ++level) {
        if (level == kTimeCountLevels - 1) {
            c.spans[2 * level] = BucketSpan{first, last};
            break;
        }
        // the coarser level's whole buckets inside [first, last]
        const long long up_first = time_bucket(first + ratio - 1, kLevelRatioBits);
        const long long up_last = time_bucket(last + 1, kLevelRatioBits) - 1;
        if (up_first > up_last) {
            c.spans[2 * level] = BucketSpan{first, last};
            break;
        }
        c.spans[2 * level] = BucketSpan{first, up_first * ratio - 1};
        c.spans[2 * level + 1] = BucketSpan{(up_last + 1) * ratio, last};
        first = up_first;
        last = up_last;
    }
    return c;
}

}  // namespace notesd::detail
