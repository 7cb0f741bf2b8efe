#include <boost/test/unit_test.hpp>

#include "search/extended.hpp"

using namespace notesd;

BOOST_AUTO_TEST_SUITE(extended)

BOOST_AUTO_TEST_CASE(collections_rank_title_over_description) {
    const std::vector<CollectionText> docs = {
        {"Garden ideas", "Tomatoes and roses"},
        {"Roses", ""},
        {"Kitchen", "Recipes with tomatoes, gardening"},
        {"Work", "Meetings"},
    };
    BOOST_CHECK((rank_collection_texts("roses", docs, 50) == std::vector<std::size_t>{1, 0}));
    // case, accents and stems fold as in note search; the last word is a prefix
    BOOST_CHECK((rank_collection_texts("TOMATO", docs, 50) == rank_collection_texts("tomatoes", docs, 50)));
    BOOST_CHECK((rank_collection_texts("gärd", docs, 50) == std::vector<std::size_t>{0, 2}));
    BOOST_CHECK((rank_collection_texts("roses", docs, 1) == std::vector<std::size_t>{1}));
    BOOST_CHECK(rank_collection_texts("\"roses and tomatoes\"", docs, 50).empty());
    BOOST_CHECK((rank_collection_texts("\"tomatoes and roses\"", docs, 50) == std::vector<std::size_t>{0}));
    BOOST_CHECK(rank_collection_texts("???", docs, 50).empty());
    BOOST_CHECK(rank_collection_texts("roses", {}, 50).empty());
}

BOOST_AUTO_TEST_CASE(equal_scores_keep_the_given_order) {
    const std::vector<CollectionText> docs = {{"Same", ""}, {"Same", ""}, {"Same", ""}};
    BOOST_CHECK((rank_collection_texts("same", docs, 50) == std::vector<std::size_t>{0, 1, 2}));
}

BOOST_AUTO_TEST_SUITE_END()
