// HugePageAllocator: blocks under 2 MB from operator new, larger ones mapped 2 MB-aligned; a
// vector keeps its contents as it grows across the threshold and shrinks back below it.
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <vector>

#include "base/huge_pages.hpp"

using namespace notesd;

BOOST_AUTO_TEST_SUITE(huge_pages)

BOOST_AUTO_TEST_CASE(large_blocks_are_aligned_and_keep_their_contents) {
    std::vector<long long, HugePageAllocator<long long>> v;
    const std::size_t n = 3 * detail::kHugePage / sizeof(long long) + 17;  // past 6 MB
    for (std::size_t i = 0; i < n; ++i) v.push_back(static_cast<long long>(i * 7));
    BOOST_CHECK_EQUAL(reinterpret_cast<std::uintptr_t>(v.data()) % detail::kHugePage, 0u);
    bool intact = true;
    for (std::size_t i = 0; i < n; ++i) intact = intact && v[i] == static_cast<long long>(i * 7);
    BOOST_CHECK(intact);
    v.resize(10);
    v.shrink_to_fit();  // back to operator new
    BOOST_CHECK_EQUAL(v.size(), 10u);
    BOOST_CHECK_EQUAL(v[9], 63);
    std::vector<long long, HugePageAllocator<long long>> copy(v);
    BOOST_CHECK(copy == v);
}

BOOST_AUTO_TEST_CASE(the_heap_tunable_is_added_once_and_an_operator_s_choice_stands) {
    BOOST_CHECK_EQUAL(tunables_with_huge_page_heap(nullptr).value_or("none"), "glibc.malloc.hugetlb=1");
    BOOST_CHECK_EQUAL(tunables_with_huge_page_heap("").value_or("none"), "glibc.malloc.hugetlb=1");
    BOOST_CHECK_EQUAL(tunables_with_huge_page_heap("glibc.malloc.arena_max=2").value_or("none"),
                      "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1");
    // set already, by the re-executed program itself or by the operator (0 keeps 4 KB pages)
    BOOST_CHECK(!tunables_with_huge_page_heap("glibc.malloc.hugetlb=1"));
    BOOST_CHECK(!tunables_with_huge_page_heap("glibc.malloc.hugetlb=0"));
    BOOST_CHECK(!tunables_with_huge_page_heap("glibc.malloc.tcache_count=0:glibc.malloc.hugetlb=2"));
}

BOOST_AUTO_TEST_SUITE_END()
