// GET /v2/notes (src/api/handlers/notes.cpp) against a fake NoteReader: what the handler asks
// the store for, and how it turns the rows into pages, totals and cursors.
#include <boost/test/unit_test.hpp>

#include <json/json.h>

#include "api/cursor.hpp"
#include "api/errors.hpp"
#include "api/handlers/handlers.hpp"
#include "api/json_io.hpp"
#include "expect_error.hpp"
#include "list_fake.hpp"

using namespace notesd;
using notesd::test::expect_api_error;
using notesd::test::FakeNoteReader;

namespace {

std::string uuid_of(int i) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "00000000-0000-4000-8000-%012d", i);
    return buf;
}

struct NotesFixture : notesd::test::ListFixture {
    NotesFixture() {
        for (int i = 1; i <= 5; ++i) {
            NoteItem n;
            n.id = uuid_of(i);
            n.title = "note " + std::to_string(i);
            n.content = "body " + std::to_string(i);
            n.created_us = 1700000000000000LL + i * 1000000LL;
            n.updated_us = 1700000000000000LL + (10 - i) * 1000000LL;  // note 1 updated last
            reader.notes.push_back(n);
        }
    }
    Json::Value get(const std::string& query, const Principal& as) {
        HttpRequest req;
        req.method = "GET";
        req.path = "/v2/notes";
        req.query = query;
        req.request_id = "api-request-test";
        const HttpResponse r = list_notes(req, as, reader, reader, cursors);
        BOOST_REQUIRE_EQUAL(r.status, 200);
        return parse_json_object(r.body);
    }
    Json::Value get(const std::string& query) { return get(query, who); }
};

std::vector<std::string> result_titles(const Json::Value& page) {
    std::vector<std::string> out;
    for (const Json::Value& n : page["results"]) out.push_back(n["title"].asString());
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(handlers_notes)

BOOST_FIXTURE_TEST_CASE(first_page_counts_once_and_reads_one_row_more, NotesFixture) {
    const Json::Value page = get("limit=2");
    BOOST_REQUIRE_EQUAL(reader.count_calls.size(), 1u);
    BOOST_CHECK_EQUAL(reader.count_calls[0], FakeNoteReader::kUser);
    BOOST_REQUIRE_EQUAL(reader.list_calls.size(), 1u);
    const FakeNoteReader::ListCall& call = reader.list_calls[0];
    BOOST_CHECK_EQUAL(call.user_id, FakeNoteReader::kUser);
    BOOST_CHECK_EQUAL(call.limit, 3);  // the lookahead row tells whether a next page exists
    BOOST_CHECK(!call.after);
    BOOST_CHECK(call.order == OrderBy::UpdatedAt);
    BOOST_CHECK(!call.with_content);
    BOOST_CHECK_EQUAL(page["total"].asInt64(), 5);
    BOOST_CHECK((result_titles(page) == std::vector<std::string>{"note 1", "note 2"}));
    BOOST_CHECK(page["next_page"].isString());
    BOOST_CHECK(!page["results"][0].isMember("content"));
    // The total and the page come from one state of the database: both in the one read view.
    BOOST_CHECK_EQUAL(reader.views_begun, 1);
    BOOST_CHECK((reader.call_views == std::vector<int>{1, 1}));
    BOOST_CHECK_EQUAL(reader.open_view, 0);
}

BOOST_FIXTURE_TEST_CASE(walk_follows_the_cursor_without_counting_again, NotesFixture) {
    std::vector<std::string> seen;
    Json::Value page = get("limit=2&order_by=created_at&include_note_content=true");
    for (int pages = 1;; ++pages) {
        BOOST_REQUIRE_LE(pages, 3);
        BOOST_CHECK_EQUAL(page["total"].asInt64(), 5);  // carried by the cursor
        for (const std::string& t : result_titles(page)) seen.push_back(t);
        BOOST_CHECK_EQUAL(page["results"][0]["content"].asString().rfind("body ", 0), 0u);
        if (!page.isMember("next_page")) break;
        page = get("limit=2&order_by=created_at&include_note_content=true&page=" +
                   page["next_page"].asString());
    }
    BOOST_CHECK((seen == std::vector<std::string>{"note 5", "note 4", "note 3", "note 2", "note 1"}));
    BOOST_CHECK_EQUAL(reader.count_calls.size(), 1u);
    BOOST_REQUIRE_EQUAL(reader.list_calls.size(), 3u);
    BOOST_CHECK(reader.list_calls[1].after.has_value());
    BOOST_CHECK_EQUAL(reader.list_calls[1].after->id, uuid_of(4));
    BOOST_CHECK_EQUAL(reader.list_calls[1].after->sort_us, 1700000004000000LL);
    for (const auto& call : reader.list_calls) {
        BOOST_CHECK(call.order == OrderBy::CreatedAt);
        BOOST_CHECK(call.with_content);
    }
}

BOOST_FIXTURE_TEST_CASE(filters_reach_the_store, NotesFixture) {
    const std::string coll = uuid_of(99);
    get("collection_id=" + coll + "&contains_open_tasks=true");
    BOOST_REQUIRE(reader.last_note_filter.collection_id.has_value());
    BOOST_CHECK_EQUAL(*reader.last_note_filter.collection_id, coll);
    BOOST_CHECK_EQUAL(reader.last_note_filter.flags_any, kFlagOpenTasks);
}

BOOST_FIXTURE_TEST_CASE(foreign_cursor_is_rejected_before_any_read, NotesFixture) {
    const Json::Value first = get("limit=2");
    const std::string cursor = first["next_page"].asString();
    reader.count_calls.clear();
    reader.list_calls.clear();
    HttpRequest req;
    req.query = "limit=2&page=" + cursor;
    // another user, and the same user with another order: both are another walk's cursor
    for (const auto& [as, query] :
         std::vector<std::pair<Principal, std::string>>{{Principal{8, 2}, req.query},
                                                        {who, req.query + "&order_by=created_at"}}) {
        req.query = query;
        expect_api_error([&] { list_notes(req, as, reader, reader, cursors); }, 400, "INVALID_CURSOR");
    }
    BOOST_CHECK(reader.count_calls.empty());
    BOOST_CHECK(reader.list_calls.empty());
}

BOOST_FIXTURE_TEST_CASE(bad_parameter_is_rejected_before_any_read, NotesFixture) {
    HttpRequest req;
    req.query = "limit=0";
    expect_api_error([&] { list_notes(req, who, reader, reader, cursors); }, 400, "INVALID_PARAMETER",
                     "limit");
    BOOST_CHECK(reader.count_calls.empty() && reader.list_calls.empty());
}

BOOST_FIXTURE_TEST_CASE(another_users_principal_reads_only_its_own, NotesFixture) {
    const Json::Value page = get("", Principal{8, 2});
    BOOST_CHECK_EQUAL(page["total"].asInt64(), 0);
    BOOST_CHECK_EQUAL(page["results"].size(), 0u);
    BOOST_CHECK(!page.isMember("next_page"));
    BOOST_CHECK_EQUAL(reader.list_calls.at(0).user_id, 8);
}

BOOST_AUTO_TEST_SUITE_END()
