// TermBlockCache (store/term_block_cache.hpp): copies by (segment, term), least recently used
// dropped first to stay within the byte budget, a segment forgotten whole.
#include <boost/test/unit_test.hpp>

#include <string>

#include "store/term_block_cache.hpp"

using notesd::detail::CachedBlock;
using notesd::detail::CachedTermBlocks;
using notesd::detail::TermBlockCache;

namespace {

CachedTermBlocks blocks_of(std::size_t bytes) { return {CachedBlock{0, 9, std::string(bytes, 'x')}}; }

}  // namespace

BOOST_AUTO_TEST_SUITE(term_block_cache)

BOOST_AUTO_TEST_CASE(keeps_copies_by_segment_and_term) {
    TermBlockCache cache(1 << 20);
    BOOST_CHECK(!cache.find(1, "a"));
    cache.put(1, "a", blocks_of(10));
    cache.put(1, "b", {});  // a segment without the term is remembered too
    cache.put(2, "a", blocks_of(20));
    BOOST_REQUIRE(cache.find(1, "a"));
    BOOST_CHECK_EQUAL(cache.find(1, "a")->at(0).data.size(), 10u);
    BOOST_REQUIRE(cache.find(1, "b"));
    BOOST_CHECK(cache.find(1, "b")->empty());
    BOOST_CHECK_EQUAL(cache.find(2, "a")->at(0).data.size(), 20u);
    BOOST_CHECK(!cache.find(2, "b"));
    cache.put(1, "a", blocks_of(30));  // replaced, counted once
    BOOST_CHECK_EQUAL(cache.find(1, "a")->at(0).data.size(), 30u);
    BOOST_CHECK_EQUAL(cache.entries(), 3u);
}

BOOST_AUTO_TEST_CASE(drops_the_least_recently_used_to_stay_within_its_budget) {
    TermBlockCache cache(10000);
    cache.put(1, "a", blocks_of(3000));
    cache.put(1, "b", blocks_of(3000));
    cache.put(1, "c", blocks_of(3000));
    BOOST_CHECK(cache.find(1, "a"));  // now the most recent
    cache.put(1, "d", blocks_of(3000));
    BOOST_CHECK(cache.find(1, "a"));
    BOOST_CHECK(!cache.find(1, "b"));
    BOOST_CHECK(cache.find(1, "c"));
    BOOST_CHECK(cache.find(1, "d"));
    BOOST_CHECK_LE(cache.bytes(), 10000u);
    // larger than the whole budget: returned, not kept, nothing else dropped for it
    const auto big = cache.put(2, "a", blocks_of(20000));
    BOOST_CHECK_EQUAL(big->at(0).data.size(), 20000u);
    BOOST_CHECK(!cache.find(2, "a"));
    BOOST_CHECK_EQUAL(cache.entries(), 3u);
}

BOOST_AUTO_TEST_CASE(a_copy_in_use_outlives_its_eviction) {
    TermBlockCache cache(5000);
    const auto held = cache.put(1, "a", blocks_of(3000));
    cache.put(1, "b", blocks_of(3000));
    BOOST_CHECK(!cache.find(1, "a"));
    BOOST_CHECK_EQUAL(held->at(0).data, std::string(3000, 'x'));
}

BOOST_AUTO_TEST_CASE(forgets_a_segment_whole) {
    TermBlockCache cache(1 << 20);
    cache.put(1, "a", blocks_of(10));
    cache.put(2, "", blocks_of(10));
    cache.put(2, "a", blocks_of(10));
    cache.put(2, "z", blocks_of(10));
    cache.put(3, "a", blocks_of(10));
    const std::size_t before = cache.bytes();
    cache.forget_segment(2);
    BOOST_CHECK(cache.find(1, "a"));
    BOOST_CHECK(!cache.find(2, ""));
    BOOST_CHECK(!cache.find(2, "a"));
    BOOST_CHECK(!cache.find(2, "z"));
    BOOST_CHECK(cache.find(3, "a"));
    BOOST_CHECK_EQUAL(cache.entries(), 2u);
    BOOST_CHECK_LT(cache.bytes(), before);
}

BOOST_AUTO_TEST_SUITE_END()
