#include <boost/test/unit_test.hpp>

#include <vector>

#include "index/merge_policy.hpp"

using namespace notesd;

namespace {

IndexState with_segments(const std::vector<long long>& live, long long pending = 0) {
    IndexState s;
    s.pending_notes = pending;
    long long id = 10;
    for (long long l : live) s.segments.push_back(SegmentStat{id++, l, l});
    return s;
}

long long live_notes(const IndexState& s) {
    long long live = 0;
    for (const SegmentStat& x : s.segments) live += x.live;
    return live;
}

// Replaces the plan's segments by one of their live notes, as a store's merge does; returns
// how many notes it rewrote.
long long apply_merge(IndexState& s, const MergePlan& plan, long long& next_id) {
    long long live = 0;
    std::vector<SegmentStat> kept;
    for (const SegmentStat& x : s.segments) {
        bool merged = false;
        for (long long id : plan.merge) merged = merged || id == x.id;
        if (merged) live += x.live;
        else kept.push_back(x);
    }
    BOOST_REQUIRE_EQUAL(s.segments.size() - kept.size(), plan.merge.size());
    if (live > 0) kept.push_back(SegmentStat{next_id++, live, live});
    s.segments = kept;
    return live;
}

// Runs the plan's merges on the state as a store would (folds aside); returns the steps.
int run_merges(const MergePolicy& p, IndexState& s) {
    long long next_id = 1000;
    int steps = 0;
    for (MergePlan plan = plan_merge(p, s, 0, 0); !plan.idle(); plan = plan_merge(p, s, 0, 0)) {
        BOOST_REQUIRE(plan.fold_notes == 0);
        BOOST_REQUIRE_LE(++steps, 1000);
        apply_merge(s, plan, next_id);
    }
    return steps;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(merge_policy)

BOOST_AUTO_TEST_CASE(rows_fold_when_many_or_old_in_bounded_batches) {
    MergePolicy p;
    p.fold_min_notes = 64;
    p.fold_delay_us = 1000;
    p.fold_batch_notes = 32;
    // few and young: left as rows
    BOOST_CHECK(plan_merge(p, with_segments({}, 10), 5000, 5500).idle());
    BOOST_CHECK(plan_merge(p, with_segments({}, 10), 0, 99999).idle());  // age unknown
    // old enough: folded
    BOOST_CHECK_EQUAL(plan_merge(p, with_segments({}, 10), 5000, 6000).fold_notes, 10);
    // many: folded a batch at a time; pending entries in larger batches
    p.fold_pending_notes = 64;
    p.fold_pending_postings = 9000;
    const MergePlan many = plan_merge(p, with_segments({}, 100), 5000, 5001);
    BOOST_CHECK_EQUAL(many.fold_notes, 32);
    BOOST_CHECK_EQUAL(many.fold_pending_notes, 64);
    BOOST_CHECK_EQUAL(many.fold_pending_postings, 9000);
    BOOST_CHECK_EQUAL(plan_merge(p, with_segments({}, 10), 5000, 6000).fold_pending_notes, 10);
    // a fold goes before any merge
    const MergePlan both = plan_merge(p, with_segments({10, 10, 10, 10, 10}, 100), 0, 0);
    BOOST_CHECK_EQUAL(both.fold_notes, 32);
    BOOST_CHECK(both.merge.empty());
    // pack folds whatever is there
    p.force = true;
    BOOST_CHECK_EQUAL(plan_merge(p, with_segments({}, 3), 0, 0).fold_notes, 3);
}

BOOST_AUTO_TEST_CASE(a_full_tier_merges_its_smallest) {
    MergePolicy p;
    p.merge_factor = 4;
    p.tier_floor_notes = 64;
    p.max_segments = 100;
    // three small ones and a big one: nothing to do
    BOOST_CHECK(plan_merge(p, with_segments({5000, 30, 40, 50}), 0, 0).idle());
    // four of tier 0 (<= 64 live) and one of tier 1: the four merge
    const MergePlan plan = plan_merge(p, with_segments({5000, 30, 40, 50, 60}), 0, 0);
    const std::vector<long long> four{11, 12, 13, 14};
    BOOST_CHECK_EQUAL_COLLECTIONS(plan.merge.begin(), plan.merge.end(), four.begin(), four.end());
    // six of one tier: the four smallest, in the state's order
    const MergePlan six = plan_merge(p, with_segments({60, 10, 50, 20, 40, 30}), 0, 0);
    const std::vector<long long> smallest{11, 13, 14, 15};
    BOOST_CHECK_EQUAL_COLLECTIONS(six.merge.begin(), six.merge.end(), smallest.begin(), smallest.end());
}

BOOST_AUTO_TEST_CASE(mostly_dead_segments_are_rewritten) {
    MergePolicy p;
    IndexState s = with_segments({1000, 1000});
    s.segments[1].live = 400;  // 600 of 1000 dead
    const MergePlan plan = plan_merge(p, s, 0, 0);
    BOOST_REQUIRE_EQUAL(plan.merge.size(), 1u);
    BOOST_CHECK_EQUAL(plan.merge[0], 11);
    s.segments[1].live = 500;  // half dead: kept
    BOOST_CHECK(plan_merge(p, s, 0, 0).idle());
}

BOOST_AUTO_TEST_CASE(the_count_stays_small_and_the_steps_end) {
    MergePolicy p;
    p.merge_factor = 4;
    p.max_segments = 8;
    // 200 fold-sized segments, as a burst of API writes leaves them
    IndexState s = with_segments(std::vector<long long>(200, 32));
    const int steps = run_merges(p, s);
    BOOST_CHECK_LE(s.segments.size(), 8u);
    BOOST_CHECK_GE(steps, 50);  // tiered: many small merges, not one big one
    BOOST_CHECK_EQUAL(live_notes(s), 200 * 32);
    // nothing left to do once there
    BOOST_CHECK(plan_merge(p, s, 0, 0).idle());
}

// A steady stream of API writes keeps a fold due at every step; merges must still run, or each
// fold adds a segment for good (the merger left 2,024 segments after a minute of write_create).
BOOST_AUTO_TEST_CASE(merges_keep_up_with_folds_that_are_always_due) {
    MergePolicy p;
    p.merge_factor = 4;
    p.max_segments = 8;
    IndexState s = with_segments({85000, 5000, 5000, 5000});  // an imported user's index
    const long long live = live_notes(s);
    long long next_id = 1000, folded = 0, rewritten = 0;
    int folds = 0;
    for (int step = 0; step < 2000; ++step) {
        s.pending_notes = 500;  // more writes came in than the last fold took
        const MergePlan plan = plan_merge(p, s, 1, 2);
        BOOST_REQUIRE(!plan.idle());
        BOOST_REQUIRE(plan.fold_pending_notes == 0 || plan.merge.empty());
        if (plan.fold_pending_notes > 0) {
            ++folds;
            folded += plan.fold_pending_notes;
            s.segments.push_back(SegmentStat{next_id++, plan.fold_pending_notes, plan.fold_pending_notes});
        } else {
            rewritten += apply_merge(s, plan, next_id);
        }
        BOOST_REQUIRE_LE(s.segments.size(), 2 * p.max_segments + 1);
    }
    BOOST_CHECK_EQUAL(live_notes(s), live + folded);
    // tiered merges rewrite a note about log(N) times (not after every fold): most steps are
    // still folds
    BOOST_CHECK_GE(folds, 1400);
    BOOST_CHECK_LE(rewritten, 6 * folded);
}

BOOST_AUTO_TEST_CASE(pack_merges_the_smallest_down_to_max_segments_at_once) {
    MergePolicy p;
    p.force = true;
    p.max_segments = 4;
    // 19 segments of 100 notes (an import in batches of 100): the 16 smallest in one step
    IndexState s = with_segments(std::vector<long long>(19, 100));
    s.segments[0].live = s.segments[0].notes = 500;
    const MergePlan plan = plan_merge(p, s, 0, 0);
    BOOST_CHECK_EQUAL(plan.merge.size(), 16u);
    for (long long id : plan.merge) BOOST_CHECK_NE(id, 10);  // the largest stays
    BOOST_CHECK_EQUAL(run_merges(p, s), 1);
    BOOST_CHECK_EQUAL(s.segments.size(), 4u);
    // at most max_segments: idle (no tier rule when packing)
    BOOST_CHECK(plan_merge(p, with_segments({10, 10, 10, 10}), 0, 0).idle());
}

BOOST_AUTO_TEST_CASE(fold_budget_keeps_the_publish_near_its_target) {
    MergePolicy p;  // target 12 ms, budget within [500, 16000]
    // SQLite-like: 16,000 changes published in 6 ms: the full budget stays
    BOOST_CHECK_EQUAL(next_fold_budget(p, 16000, 16000, 6000), 16000);
    // PostgreSQL-like: 16,000 changes in 150 ms: down at once to what fits 12 ms
    const long long small = next_fold_budget(p, 16000, 16000, 150000);
    BOOST_CHECK_EQUAL(small, 1280);
    // a fold at that size in 12 ms keeps it
    BOOST_CHECK_EQUAL(next_fold_budget(p, small, small, 12000), small);
    // faster again (a quiet server): grows, at most twice a step, up to the policy's size
    BOOST_CHECK_EQUAL(next_fold_budget(p, small, small, 1000), 2 * small);
    BOOST_CHECK_EQUAL(next_fold_budget(p, 12000, 12000, 1000), 16000);
    // a fold of few changes (few pending notes) says nothing about a full one: no growth
    BOOST_CHECK_EQUAL(next_fold_budget(p, small, 300, 100), small);
    // but a slow small one shrinks it, never below the floor
    BOOST_CHECK_EQUAL(next_fold_budget(p, small, 300, 12000), 500);
    BOOST_CHECK_EQUAL(next_fold_budget(p, 16000, 100, 1000000), 500);
    // no fold in the step: unchanged (clamped to the policy's bounds)
    BOOST_CHECK_EQUAL(next_fold_budget(p, 2000, 0, 0), 2000);
    BOOST_CHECK_EQUAL(next_fold_budget(p, 99999, 0, 0), 16000);
}

BOOST_AUTO_TEST_CASE(behind_with_many_pending_notes_or_past_twice_max_segments) {
    MergePolicy p;
    p.max_segments = 8;
    p.behind_pending_notes = 512;
    BOOST_TEST(!index_behind(p, with_segments({100, 100}, 511)));
    BOOST_TEST(index_behind(p, with_segments({100, 100}, 512)));
    BOOST_TEST(!index_behind(p, with_segments(std::vector<long long>(16, 100))));
    BOOST_TEST(index_behind(p, with_segments(std::vector<long long>(17, 100))));
}

BOOST_AUTO_TEST_SUITE_END()
