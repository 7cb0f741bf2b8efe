// The collection handlers of the write API (src/api/handlers/collections_write.cpp) against a
// fake CollectionEditor, and collection search against the list fake (a NoteReader) and plain
// ReadViews: field sets, the description rules, each outcome's error, path parameters.
#include <boost/test/unit_test.hpp>

#include <json/json.h>

#include <set>

#include "api/errors.hpp"
#include "api/handlers/handlers.hpp"
#include "api/json_io.hpp"
#include "api/router.hpp"
#include "expect_error.hpp"
#include "request_helpers.hpp"
#include "list_fake.hpp"
#include "write_fakes.hpp"

using namespace notesd;
using notesd::test::expect_api_error;
using notesd::test::json_request;
using notesd::test::keys;
using notesd::test::ok_json;
using notesd::test::FakeCollections;
using notesd::test::kWriter;

namespace {

const std::string kColl = "3e8c9d88-a076-4c61-8f7c-405d6e7f8091";
const std::string kOther = "4f9dae99-b187-4d72-907d-516e7f8091a2";
const std::string kNote = "5aaebfaa-c298-4e83-a18e-627f8091a2b3";

struct CollectionsWrite {
    FakeCollections store;
    Principal who{kWriter, 1};

    // The handler the router picks for the request.
    HttpResponse call(const std::string& method, const std::string& path, const std::string& body = "") {
        const HttpRequest r = json_request(method, path, body);
        const Route rt = route(r.method, r.path);
        switch (rt.endpoint) {
            case Endpoint::CreateCollection: return create_collection(r, who, store);
            case Endpoint::GetCollection: return get_collection(r, rt, who, store);
            case Endpoint::UpdateCollection: return update_collection(r, rt, who, store);
            case Endpoint::DeleteCollection: return delete_collection(r, rt, who, store);
            case Endpoint::LinkNote: return link_note(r, rt, who, store);
            case Endpoint::UnlinkNote: return unlink_note(r, rt, who, store);
            case Endpoint::MoveNote: return move_note(r, rt, who, store);
            default: BOOST_FAIL("not a collection write: " + method + " " + path);
        }
        return {};
    }
};

const std::set<std::string> kCreateFields = {"request_id", "id", "title", "description",
                                             "created_at", "updated_at"};

}  // namespace

BOOST_AUTO_TEST_SUITE(handlers_collections_write)

BOOST_FIXTURE_TEST_CASE(create_and_get, CollectionsWrite) {
    const Json::Value v = ok_json(call("POST", "/v2/collections", R"({"title": "Box", "id": ")" +
                                    kColl + R"(", "description": "", "created_at": "2025-01-01T00:00:00Z"})"));
    BOOST_CHECK(keys(v) == kCreateFields);
    BOOST_CHECK_EQUAL(v["id"].asString(), kColl);
    BOOST_CHECK(v["description"].isNull());  // "" is no description
    BOOST_CHECK_EQUAL(v["created_at"].asString(), "2025-01-01T00:00:00Z");
    BOOST_CHECK_GT(store.collections[kColl].updated_us, store.collections[kColl].created_us);
    store.collections[kColl].note_count = 4;
    const Json::Value got = ok_json(call("GET", "/v2/collections/" + kColl));
    std::set<std::string> with_count = kCreateFields;
    with_count.insert("note_count");
    BOOST_CHECK(keys(got) == with_count);
    BOOST_CHECK_EQUAL(got["note_count"].asInt(), 4);
    expect_api_error([&] { call("POST", "/v2/collections", R"({"title": "Again", "id": ")" + kColl + "\"}"); },
                     409, "CONFLICT", "id");
    expect_api_error([&] { call("GET", "/v2/collections/" + kOther); }, 404, "NOT_FOUND");
    expect_api_error([&] { call("GET", "/v2/collections/x"); }, 400, "INVALID_PARAMETER", "collection_id");
}

BOOST_FIXTURE_TEST_CASE(create_errors, CollectionsWrite) {
    expect_api_error([&] { call("POST", "/v2/collections", "{}"); }, 400, "INVALID_PARAMETER", "title");
    expect_api_error([&] { call("POST", "/v2/collections", R"({"title": ""})"); }, 400,
                     "INVALID_PARAMETER", "title");
    expect_api_error([&] { call("POST", "/v2/collections", R"({"title": ")" + std::string(1001, 'x') + "\"}"); },
                     400, "INVALID_PARAMETER", "title");
    expect_api_error([&] { call("POST", "/v2/collections", R"({"title": "t", "description": ")" +
                                std::string(10001, 'x') + "\"}"); },
                     400, "INVALID_PARAMETER", "description");
    expect_api_error([&] { call("POST", "/v2/collections", ""); }, 400, "INVALID_JSON");
    BOOST_CHECK_EQUAL(store.calls, 0);
}

BOOST_FIXTURE_TEST_CASE(update_takes_every_field_as_optional, CollectionsWrite) {
    store.collections[kColl] = CollectionItem{kColl, "Box", std::string("old"), 1000, 1000, 2};
    // an empty body is {}: only updated_at moves (to the server's clock)
    Json::Value v = ok_json(call("PATCH", "/v2/collections/" + kColl));
    BOOST_CHECK(keys(v) == kCreateFields);
    BOOST_CHECK(!store.last_patch->title && !store.last_patch->description);
    BOOST_CHECK_GT(store.last_patch->updated_us, 1000);
    BOOST_CHECK_EQUAL(v["description"].asString(), "old");
    v = ok_json(call("PATCH", "/v2/collections/" + kColl, R"({"description": "", "title": "Crate"})"));
    BOOST_REQUIRE(store.last_patch->description);
    BOOST_CHECK(!*store.last_patch->description);  // cleared
    BOOST_CHECK(v["description"].isNull());
    BOOST_CHECK_EQUAL(v["title"].asString(), "Crate");
    expect_api_error([&] { call("PATCH", "/v2/collections/" + kColl,
                                R"({"updated_at": "1970-01-01T00:00:00Z"})"); },
                     400, "INVALID_PARAMETER", "updated_at");
    expect_api_error([&] { call("PATCH", "/v2/collections/" + kOther, "{}"); }, 404, "NOT_FOUND");
    expect_api_error([&] { call("PATCH", "/v2/collections/" + kColl, R"({"title": null, "description": 3})"); },
                     400, "INVALID_PARAMETER", "description");
    BOOST_CHECK(keys(ok_json(call("DELETE", "/v2/collections/" + kColl))) == std::set<std::string>{"request_id"});
    expect_api_error([&] { call("DELETE", "/v2/collections/" + kColl); }, 404, "NOT_FOUND");
}

BOOST_FIXTURE_TEST_CASE(links_map_each_outcome, CollectionsWrite) {
    store.collections[kColl] = CollectionItem{kColl, "Box", std::nullopt, 1, 1, 0};
    const std::string link = "/v2/collections/" + kColl + "/notes/" + kNote;
    BOOST_CHECK(keys(ok_json(call("PUT", link))) == std::set<std::string>{"request_id"});
    BOOST_CHECK(keys(ok_json(call("DELETE", link))) == std::set<std::string>{"request_id"});
    BOOST_REQUIRE_EQUAL(store.link_calls.size(), 2u);
    BOOST_CHECK_EQUAL(store.link_calls[0].op, "link");
    BOOST_CHECK_EQUAL(store.link_calls[1].op, "unlink");
    BOOST_CHECK_EQUAL(store.link_calls[1].note, kNote);
    expect_api_error([&] { call("PUT", "/v2/collections/" + kOther + "/notes/" + kNote); }, 404, "NOT_FOUND");
    store.forced = CollectionWrite::NoNote;
    expect_api_error([&] { call("PUT", link); }, 404, "NOT_FOUND");
    expect_api_error([&] { call("PUT", "/v2/collections/" + kColl + "/notes/x"); }, 400,
                     "INVALID_PARAMETER", "note_id");
    expect_api_error([&] { call("DELETE", "/v2/collections/x/notes/" + kNote); }, 400,
                     "INVALID_PARAMETER", "collection_id");

    const std::string move = link + "/move";
    BOOST_CHECK(keys(ok_json(call("POST", move, R"({"target_collection_id": ")" + kOther + "\"}"))) ==
                std::set<std::string>{"request_id"});
    BOOST_CHECK_EQUAL(store.link_calls.back().target, kOther);
    expect_api_error([&] { call("POST", move, "{}"); }, 400, "INVALID_PARAMETER", "target_collection_id");
    expect_api_error([&] { call("POST", "/v2/collections/x/notes/" + kNote + "/move",
                                R"({"target_collection_id": ")" + kOther + "\"}"); },
                     400, "INVALID_PARAMETER", "source_collection_id");
    for (CollectionWrite outcome : {CollectionWrite::NoTarget, CollectionWrite::NotLinked,
                                    CollectionWrite::NoNote, CollectionWrite::NoCollection}) {
        store.forced = outcome;
        expect_api_error([&] { call("POST", move, R"({"target_collection_id": ")" + kOther + "\"}"); },
                         404, "NOT_FOUND");
    }
}

BOOST_AUTO_TEST_CASE(collection_search_ranks_titles_and_descriptions) {
    notesd::test::FakeNoteReader reader;
    ReadViews views;
    auto coll = [](int i, const std::string& title, const char* description) {
        CollectionItem c;
        c.id = "00000000-0000-4000-8000-00000000000" + std::to_string(i);
        c.title = title;
        if (description) c.description = description;
        c.created_us = c.updated_us = 1000 + i;
        return c;
    };
    reader.collections = {coll(1, "Recipes", "pasta and bread"), coll(2, "Travel", "bread in Paris"),
                          coll(3, "Work", nullptr), coll(4, "Bread", nullptr)};
    auto search = [&](const std::string& body) {
        const HttpRequest r = json_request("POST", "/v2/collections/search", body);
        const HttpResponse out = search_collections(r, Principal{notesd::test::FakeNoteReader::kUser, 1},
                                                    reader, views);
        std::vector<std::string> titles;
        const Json::Value v = ok_json(out);
        BOOST_CHECK_EQUAL(v["total"].asUInt(), v["results"].size());
        for (const Json::Value& c : v["results"]) titles.push_back(c["title"].asString());
        return titles;
    };
    // a title match outweighs a description match; no match, no result
    const std::vector<std::string> bread = search(R"({"query": "bread"})");
    BOOST_REQUIRE_EQUAL(bread.size(), 3u);
    BOOST_CHECK_EQUAL(bread[0], "Bread");
    BOOST_CHECK(search(R"({"query": "nothing here"})").empty());
    // without a query (or a blank one): the most recently updated first
    BOOST_CHECK((search("") == std::vector<std::string>{"Bread", "Work", "Travel", "Recipes"}));
    BOOST_CHECK((search(R"({"query": "  "})") == std::vector<std::string>{"Bread", "Work", "Travel", "Recipes"}));
    expect_api_error([&] { search(R"({"query": 5})"); }, 400, "INVALID_PARAMETER", "query");
    expect_api_error([&] { search(R"({"filter_by_created_after": "yesterday"})"); }, 400,
                     "INVALID_PARAMETER", "filter_by_created_after");
}

BOOST_AUTO_TEST_SUITE_END()
