// How a postings row packs its counts: two non-negative counts share one BIGINT column
// (postings.tfs: title and body occurrences; postings.lens: title and body lengths), so a row
// stays narrow and every backend stores it the same way.
#pragma once
#include <algorithm>
#include <string>
#include <utility>

#include "base/model.hpp"

namespace notesd {

/// first * 2^32 + second, each capped at 2^31 - 1 so the value stays a positive signed 64-bit
/// integer.
inline long long pack_pair(long long first, long long second) {
    constexpr long long kCap = 0x7fffffffLL;
    return (std::min(first, kCap) << 32) | std::min(second, kCap);
}
inline long long pair_first(long long packed) { return packed >> 32; }
inline long long pair_second(long long packed) { return packed & 0xffffffffLL; }

/// A postings row (uid_hi, uid_lo, updated_us, tfs, lens, pos) as the ranker reads it.
inline TermPosting unpack_posting(long long hi, long long lo, long long updated, long long tfs,
                                  long long lens, std::string pos) {
    return TermPosting{hi, lo, updated, static_cast<int>(pair_first(tfs)),
                       static_cast<int>(pair_second(tfs)), static_cast<int>(pair_first(lens)),
                       static_cast<int>(pair_second(lens)), std::move(pos)};
}

}  // namespace notesd
