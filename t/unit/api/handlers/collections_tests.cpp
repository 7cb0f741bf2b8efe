// GET /v2/collections (src/api/handlers/collections.cpp) against a fake NoteReader.
#include <boost/test/unit_test.hpp>

#include <json/json.h>

#include "api/cursor.hpp"
#include "api/errors.hpp"
#include "api/handlers/handlers.hpp"
#include "api/json_io.hpp"
#include "list_fake.hpp"

using namespace notesd;
using notesd::test::FakeNoteReader;

namespace {

struct CollectionsFixture : notesd::test::ListFixture {
    CollectionsFixture() {
        for (int i = 1; i <= 3; ++i) {
            CollectionItem c;
            c.id = "00000000-0000-4000-8000-00000000000" + std::to_string(i);
            c.title = "collection " + std::to_string(i);
            if (i == 2) c.description = "the second";
            c.created_us = 1700000000000000LL + i;
            c.updated_us = 1700000000000000LL + i;
            c.note_count = 10 * i;
            reader.collections.push_back(c);
        }
    }
    Json::Value get(const std::string& query) {
        HttpRequest req;
        req.query = query;
        req.request_id = "api-request-test";
        const HttpResponse r = list_collections(req, who, reader, reader, cursors);
        BOOST_REQUIRE_EQUAL(r.status, 200);
        return parse_json_object(r.body);
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(handlers_collections)

BOOST_FIXTURE_TEST_CASE(pages_walk_every_collection_once, CollectionsFixture) {
    Json::Value page = get("limit=2");
    BOOST_CHECK_EQUAL(page["total"].asInt64(), 3);
    BOOST_REQUIRE_EQUAL(page["results"].size(), 2u);
    BOOST_CHECK_EQUAL(page["results"][0]["title"].asString(), "collection 3");
    BOOST_CHECK_EQUAL(page["results"][0]["note_count"].asInt64(), 30);
    BOOST_CHECK(page["results"][1]["description"].asString() == "the second");
    BOOST_REQUIRE(page["next_page"].isString());
    page = get("limit=2&page=" + page["next_page"].asString());
    BOOST_REQUIRE_EQUAL(page["results"].size(), 1u);
    BOOST_CHECK_EQUAL(page["results"][0]["title"].asString(), "collection 1");
    BOOST_CHECK(page["results"][0]["description"].isNull());
    BOOST_CHECK(page["next_page"].isNull());  // present and null on the last page
    BOOST_CHECK_EQUAL(page["total"].asInt64(), 3);
    BOOST_CHECK_EQUAL(reader.count_calls.size(), 1u);
    BOOST_REQUIRE_EQUAL(reader.list_calls.size(), 2u);
    BOOST_CHECK_EQUAL(reader.list_calls[0].limit, 3);
    BOOST_CHECK_EQUAL(reader.list_calls[1].after->id, "00000000-0000-4000-8000-000000000002");
    // The first page's total and rows in one read view; the cursor's page is one read.
    BOOST_CHECK_EQUAL(reader.views_begun, 1);
    BOOST_CHECK((reader.call_views == std::vector<int>{1, 1, 0}));
    BOOST_CHECK_EQUAL(reader.open_view, 0);
}

BOOST_FIXTURE_TEST_CASE(tampered_cursor_is_rejected_before_any_read, CollectionsFixture) {
    std::string cursor = get("limit=1")["next_page"].asString();
    cursor.back() = cursor.back() == 'A' ? 'B' : 'A';
    reader.count_calls.clear();
    reader.list_calls.clear();
    HttpRequest req;
    req.query = "limit=1&page=" + cursor;
    BOOST_CHECK_THROW(list_collections(req, who, reader, reader, cursors), ApiError);
    BOOST_CHECK(reader.count_calls.empty() && reader.list_calls.empty());
}

BOOST_AUTO_TEST_SUITE_END()
