#include <boost/test/unit_test.hpp>

#include "api/errors.hpp"
#include "api/params.hpp"
#include "api/query_string.hpp"

using namespace notesd;

namespace {

std::string error_field(const std::string& query) {
    try {
        parse_list_notes(QueryArgs(query));
    } catch (const ApiError& e) {
        BOOST_CHECK_EQUAL(e.status(), 400);
        BOOST_CHECK_EQUAL(e.kind(), "INVALID_PARAMETER");
        return e.field();
    }
    return "";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(params)

BOOST_AUTO_TEST_CASE(defaults) {
    auto c = parse_list_notes(QueryArgs(""));
    BOOST_CHECK_EQUAL(c.limit, 50);
    BOOST_CHECK(c.order_by == OrderBy::UpdatedAt);
    BOOST_CHECK(!c.page);
    BOOST_CHECK(!c.include_content);
    BOOST_CHECK_EQUAL(c.filter.flags_any, 0);
    BOOST_CHECK(!c.filter.collection_id);
}

BOOST_AUTO_TEST_CASE(limit_bounds) {
    BOOST_CHECK_EQUAL(parse_list_notes(QueryArgs("limit=1")).limit, 1);
    BOOST_CHECK_EQUAL(parse_list_notes(QueryArgs("limit=100")).limit, 100);
    BOOST_CHECK_EQUAL(parse_list_notes(QueryArgs("limit=")).limit, 50);
    for (const char* bad : {"limit=0", "limit=101", "limit=-1", "limit=+5", "limit=1.0",
                            "limit=abc", "limit=99999999999999999999999", "limit=%205"})
        BOOST_CHECK_EQUAL(error_field(bad), "limit");
}

BOOST_AUTO_TEST_CASE(limit_message_names_range) {
    try {
        parse_list_notes(QueryArgs("limit=0"));
        BOOST_FAIL("expected an error");
    } catch (const ApiError& e) {
        BOOST_CHECK_EQUAL(e.message(), "limit must be an integer from 1 to 100");
    }
}

BOOST_AUTO_TEST_CASE(order_by_values) {
    BOOST_CHECK(parse_list_notes(QueryArgs("order_by=created_at")).order_by == OrderBy::CreatedAt);
    BOOST_CHECK_EQUAL(error_field("order_by=title"), "order_by");
    BOOST_CHECK_EQUAL(error_field("order_by="), "order_by");
}

BOOST_AUTO_TEST_CASE(booleans) {
    BOOST_CHECK(parse_list_notes(QueryArgs("include_note_content=TRUE")).include_content);
    BOOST_CHECK(parse_list_notes(QueryArgs("include_note_content=1")).include_content);
    BOOST_CHECK(!parse_list_notes(QueryArgs("include_note_content=False")).include_content);
    BOOST_CHECK_EQUAL(error_field("include_note_content="), "include_note_content");
    BOOST_CHECK_EQUAL(error_field("contains_tasks=yes"), "contains_tasks");
    BOOST_CHECK_EQUAL(error_field("contains_images=2"), "contains_images");
}

BOOST_AUTO_TEST_CASE(flags_are_or_combined_and_false_equals_absent) {
    auto c = parse_list_notes(QueryArgs("contains_open_tasks=true&contains_files=1&contains_images=false"));
    BOOST_CHECK_EQUAL(c.filter.flags_any, kFlagOpenTasks | kFlagFiles);
    BOOST_CHECK_EQUAL(parse_list_notes(QueryArgs("contains_images=false")).scope(),
                      parse_list_notes(QueryArgs("")).scope());
}

BOOST_AUTO_TEST_CASE(dates) {
    auto c = parse_list_notes(QueryArgs("filter_by_created_after=2025-01-01T10:00:00+01:00"));
    BOOST_CHECK_EQUAL(c.filter.created.min_us, 1735722000000000LL);
    auto lenient = parse_list_notes(QueryArgs("filter_by_created_after=2025-01-01T10:00:00%2B01:00"));
    BOOST_CHECK_EQUAL(lenient.filter.created.min_us, c.filter.created.min_us);  // '+' became ' '
    BOOST_CHECK_EQUAL(parse_list_notes(QueryArgs("filter_by_updated_before=")).filter.updated.max_us,
                      kMaxTime);
    BOOST_CHECK_EQUAL(error_field("filter_by_updated_before=2025-01-01"), "filter_by_updated_before");
    BOOST_CHECK_EQUAL(error_field("filter_by_updated_after=2025-01-01T00:00:00"), "filter_by_updated_after");
    BOOST_CHECK_EQUAL(error_field("filter_by_created_before=2025-02-30T00:00:00Z"), "filter_by_created_before");
}

BOOST_AUTO_TEST_CASE(same_instant_gives_same_scope) {
    BOOST_CHECK_EQUAL(parse_list_notes(QueryArgs("filter_by_created_after=2025-01-01T10:00:00%2B01:00")).scope(),
                      parse_list_notes(QueryArgs("filter_by_created_after=2025-01-01T09:00:00Z")).scope());
}

BOOST_AUTO_TEST_CASE(collection_id) {
    auto c = parse_list_notes(QueryArgs("collection_id=3F0C1C2E-8A51-4C8E-9A43-2F1D7A6B9C01"));
    BOOST_CHECK_EQUAL(*c.filter.collection_id, "3f0c1c2e-8a51-4c8e-9a43-2f1d7a6b9c01");
    BOOST_CHECK(!parse_list_notes(QueryArgs("collection_id=")).filter.collection_id);
    BOOST_CHECK_EQUAL(error_field("collection_id=42"), "collection_id");
}

BOOST_AUTO_TEST_CASE(scope_distinguishes_filters_not_limit) {
    BOOST_CHECK_EQUAL(parse_list_notes(QueryArgs("limit=5")).scope(), parse_list_notes(QueryArgs("")).scope());
    BOOST_CHECK_EQUAL(parse_list_notes(QueryArgs("include_note_content=true")).scope(),
                      parse_list_notes(QueryArgs("")).scope());
    BOOST_CHECK_NE(parse_list_notes(QueryArgs("order_by=created_at")).scope(), parse_list_notes(QueryArgs("")).scope());
    BOOST_CHECK_NE(parse_list_notes(QueryArgs("contains_tasks=1")).scope(), parse_list_notes(QueryArgs("")).scope());
    BOOST_CHECK_NE(parse_list_collections(QueryArgs("")).scope(), parse_list_notes(QueryArgs("")).scope());
}

BOOST_AUTO_TEST_CASE(collections_ignore_note_only_parameters) {
    auto c = parse_list_collections(QueryArgs("contains_tasks=banana&collection_id=x&limit=3"));
    BOOST_CHECK_EQUAL(c.limit, 3);
}

BOOST_AUTO_TEST_SUITE_END()
