#include "index/merge_policy.hpp"

#include <algorithm>
#include <map>

namespace notesd {

namespace {

// Tier 0 holds segments of up to tier_floor_notes live notes, tier t+1 up to merge_factor times
// tier t's top.
int tier_of(const MergePolicy& p, long long live) {
    int t = 0;
    const long long factor = static_cast<long long>(std::max<std::size_t>(p.merge_factor, 2));
    for (long long top = std::max(p.tier_floor_notes, 1LL); live > top && t < 62; top *= factor) ++t;
    return t;
}

// The ids of `picked` (indexes into s.segments) in the state's order.
std::vector<long long> ids_of(const IndexState& s, std::vector<std::size_t> picked) {
    std::sort(picked.begin(), picked.end());
    std::vector<long long> out;
    for (std::size_t i : picked) out.push_back(s.segments[i].id);
    return out;
}

// The n smallest (live notes; the older first among equals) of these segments.
std::vector<std::size_t> smallest(const IndexState& s, std::vector<std::size_t> of, std::size_t n) {
    std::stable_sort(of.begin(), of.end(), [&](std::size_t a, std::size_t b) {
        return s.segments[a].live < s.segments[b].live;
    });
    of.resize(std::min(n, of.size()));
    return of;
}

bool fold_due(const MergePolicy& p, const IndexState& s, long long since, long long now) {
    if (s.pending_notes <= 0) return false;
    return p.force || s.pending_notes >= p.fold_min_notes ||
           (since > 0 && now - since >= p.fold_delay_us);
}

}  // namespace

long long next_fold_budget(const MergePolicy& p, long long budget, long long postings,
                           long long publish_us) {
    const long long lo = std::max(p.fold_pending_postings_min, 1LL);
    const long long hi = std::max(p.fold_pending_postings, lo);
    budget = std::clamp(budget, lo, hi);
    if (postings <= 0 || publish_us <= 0) return budget;
    const long long fits = static_cast<long long>(static_cast<double>(postings) *
                                                  static_cast<double>(p.fold_publish_target_us) /
                                                  static_cast<double>(publish_us));
    if (fits < budget) return std::max(fits, lo);
    if (postings * 2 < budget) return budget;  // a small fold says little about a full one
    return std::min({fits, budget * 2, hi});
}

MergePlan plan_merge(const MergePolicy& p, const IndexState& s, long long pending_since_us,
                     long long now_us) {
    MergePlan out;
    const std::size_t n = s.segments.size();
    const std::size_t max_segments = std::max<std::size_t>(p.max_segments, 1);
    const auto fold = [&] {
        out.fold_notes = std::min(s.pending_notes, std::max(p.fold_batch_notes, 1LL));
        out.fold_postings = std::max(p.fold_batch_postings, 1LL);
        out.fold_pending_notes = std::min(s.pending_notes, std::max(p.fold_pending_notes, 1LL));
        out.fold_pending_postings = std::max(p.fold_pending_postings, 1LL);
        return out;
    };
    // Rows first: they are the slowest to read and each step's fold is bounded. But not past
    // max_segments: under a steady stream of writes a fold is always due, each fold is a new
    // segment, and merges waiting for a moment without a fold never ran (2,024 segments after
    // a minute of write_create), which every search and every merger step then paid for. Past
    // it, a due fold waits for the merges of full tiers (the merges that keep a note's
    // rewrites at about log(N)), and for the smallest-first merge only past twice as many:
    // that one, after every fold, would rewrite the newest notes again each time.
    const bool fold_is_due = fold_due(p, s, pending_since_us, now_us);
    if (fold_is_due && (p.force || n <= max_segments)) return fold();
    std::vector<std::size_t> dead, all;
    for (std::size_t i = 0; i < n; ++i) {
        all.push_back(i);
        if (s.segments[i].live * 2 < s.segments[i].notes) dead.push_back(i);
    }
    // Mostly dead notes: rewritten without them (an empty result is just dropped).
    if (!dead.empty()) {
        out.merge = ids_of(s, dead);
        return out;
    }
    if (!p.force) {
        const std::size_t factor = std::max<std::size_t>(p.merge_factor, 2);
        std::map<int, std::vector<std::size_t>> tiers;
        for (std::size_t i = 0; i < n; ++i) tiers[tier_of(p, s.segments[i].live)].push_back(i);
        for (const auto& [tier, members] : tiers)
            if (members.size() >= factor) {
                out.merge = ids_of(s, smallest(s, members, factor));
                return out;
            }
    }
    if (fold_is_due && n <= 2 * max_segments) return fold();  // index_behind past it
    // Too many whatever their sizes: the smallest become one, leaving max_segments.
    if (n > max_segments) out.merge = ids_of(s, smallest(s, all, n - max_segments + 1));
    return out;
}

bool index_behind(const MergePolicy& p, const IndexState& s) {
    return s.pending_notes >= p.behind_pending_notes ||
           s.segments.size() > 2 * std::max<std::size_t>(p.max_segments, 1);
}

}  // namespace notesd
