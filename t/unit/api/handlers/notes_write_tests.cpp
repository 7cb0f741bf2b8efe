// The note write handlers (src/api/handlers/notes_write.cpp) against fakes of NoteEditor,
// NoteTrash and NoteWriter: what they hand the store (derived fields, collection titles, the
// expected version), the exact field sets they answer with, the ETag rules, and how each store
// outcome and each bad input maps to the contract's errors.
#include <boost/test/unit_test.hpp>

#include <json/json.h>

#include <set>

#include "api/errors.hpp"
#include "api/handlers/handlers.hpp"
#include "api/json_io.hpp"
#include "api/router.hpp"
#include "expect_error.hpp"
#include "request_helpers.hpp"
#include "write_fakes.hpp"

using namespace notesd;
using notesd::test::expect_api_error;
using notesd::test::json_request;
using notesd::test::keys;
using notesd::test::ok_json;
using notesd::test::FakeNotes;
using notesd::test::kWriter;

namespace {

const std::string kNote = "0b5f6a55-7d43-4f3e-9c49-1d2a3b4c5d6e";
const std::string kBox = "1c6a7b66-8e54-4a4f-8d5a-2e3b4c5d6e7f";
const std::string kInbox = "2d7b8c77-9f65-4b50-9e6b-3f4c5d6e7f80";

struct NotesWrite {
    FakeNotes store;
    Principal who{kWriter, 1};

    static Route route_of(const HttpRequest& r) { return route(r.method, r.path); }
    HttpResponse create(const std::string& body) {
        return create_note(json_request("POST", "/v2/notes", body), who, store);
    }
    HttpResponse update(const std::string& id, const std::string& body) {
        const HttpRequest r = json_request("PATCH", "/v2/notes/" + id, body);
        return update_note(r, route_of(r), who, store);
    }
    HttpResponse get(const std::string& id, const std::string& if_none_match = "") {
        HttpRequest r = json_request("GET", "/v2/notes/" + id);
        r.if_none_match = if_none_match;
        return get_note(r, route_of(r), who, store, store);
    }
    std::string stored(const std::string& content, long long created_us = 1000) {
        NoteInput n;
        n.id = kNote;
        n.title = "stored";
        n.content = content;
        n.created_us = created_us;
        n.updated_us = created_us;
        n.attachments = {Attachment{kBox, AttachmentKind::Image, "a.png"},
                         Attachment{kInbox, AttachmentKind::File, "b.PDF?x=1"},
                         Attachment{kNote, AttachmentKind::File, "c.zip"}};
        store.notes[kNote] = FakeNotes::record_of(n, 3);
        return kNote;
    }
};

const std::set<std::string> kCreateFields = {"request_id", "id", "title", "content", "version",
                                             "collection_ids", "created_at", "updated_at"};

}  // namespace

BOOST_AUTO_TEST_SUITE(handlers_notes_write)

BOOST_FIXTURE_TEST_CASE(create_derives_the_note_and_matches_titles, NotesWrite) {
    store.titles = {{kBox, "Box"}, {kInbox, "Ínbox"}};
    const Json::Value v = ok_json(create(
        R"({"content": "# Hello *world*\n\n- [ ] a task", "collection_ids": [")" + kBox +
        R"("], "collection_titles": ["ínBOX", "nothing"], "created_at": "2025-01-02T03:04:05Z",
        "extra": 1})"));
    BOOST_CHECK(keys(v) == kCreateFields);
    BOOST_REQUIRE(store.last_input);
    const NoteInput& n = *store.last_input;
    BOOST_CHECK_EQUAL(n.title, "Hello world");  // derived as an import derives it
    BOOST_CHECK(n.flags != 0);                  // the open task
    BOOST_CHECK_EQUAL(n.plain_text, "a task");  // what the store indexes with the title
    BOOST_CHECK((n.collection_ids == std::vector<std::string>{kBox, kInbox}));
    BOOST_CHECK_EQUAL(n.created_us, 1735787045000000LL);
    BOOST_CHECK_GT(n.updated_us, n.created_us);  // updated_at omitted: the server's clock
    BOOST_CHECK_EQUAL(v["id"].asString(), n.id);   // a new uuid
    BOOST_CHECK_EQUAL(v["version"].asInt(), 1);
    BOOST_CHECK_EQUAL(v["created_at"].asString(), "2025-01-02T03:04:05Z");
}

BOOST_FIXTURE_TEST_CASE(create_errors_name_the_field, NotesWrite) {
    expect_api_error([&] { create(R"({"title": "x"})"); }, 400, "INVALID_PARAMETER", "content");
    expect_api_error([&] { create(R"({"content": 5})"); }, 400, "INVALID_PARAMETER", "content");
    expect_api_error([&] { create(R"({"content": "x", "id": "nope"})"); }, 400, "INVALID_PARAMETER", "id");
    expect_api_error([&] { create(R"({"content": "x", "collection_ids": "a"})"); }, 400,
                     "INVALID_PARAMETER", "collection_ids");
    expect_api_error([&] { create(R"({"content": "x", "updated_at": "2025-01-01"})"); }, 400,
                     "INVALID_PARAMETER", "updated_at");
    expect_api_error([&] { create(R"({"content": "x", "created_at": "2025-01-02T00:00:00Z",
                                      "updated_at": "2025-01-01T00:00:00Z"})"); },
                     400, "INVALID_PARAMETER", "updated_at");
    expect_api_error([&] { create(R"({"content": ")" + std::string(200001, 'a') + "\"}"); }, 400,
                     "INVALID_PARAMETER", "content");
    expect_api_error([&] { create("[1]"); }, 400, "INVALID_JSON");
    expect_api_error([&] { create(""); }, 400, "INVALID_JSON");
    HttpRequest form = json_request("POST", "/v2/notes", "content=x");
    form.content_type = "application/x-www-form-urlencoded";
    expect_api_error([&] { create_note(form, who, store); }, 415, "UNSUPPORTED_MEDIA_TYPE");
    BOOST_CHECK_EQUAL(store.calls, 0);  // nothing reached the store
    stored("x");
    expect_api_error([&] { create(R"({"content": "y", "id": ")" + kNote + "\"}"); }, 409, "CONFLICT", "id");
}

BOOST_FIXTURE_TEST_CASE(update_checks_the_version, NotesWrite) {
    stored("old", 1000);
    const Json::Value v = ok_json(update(kNote, R"({"content": "# New\n\nbody", "version": 3,
                                                 "updated_at": "2025-01-01T00:00:00Z"})"));
    std::set<std::string> fields = kCreateFields;
    fields.insert("trashed_at");
    BOOST_CHECK(keys(v) == fields);
    BOOST_CHECK_EQUAL(store.last_expected_version, 3);
    BOOST_CHECK_EQUAL(store.last_input->id, kNote);
    BOOST_CHECK_EQUAL(v["version"].asInt(), 4);
    BOOST_CHECK_EQUAL(v["title"].asString(), "New");
    BOOST_CHECK(v["trashed_at"].isNull());
    try {
        update(kNote, R"({"content": "again", "version": 3})");
        BOOST_ERROR("a stale version was accepted");
    } catch (const ApiError& e) {
        BOOST_CHECK_EQUAL(e.status(), 409);
        BOOST_CHECK_EQUAL(e.kind(), "VERSION_CONFLICT");
        BOOST_CHECK_EQUAL(e.field(), "version");
        BOOST_CHECK(e.message().find("current version is 4") != std::string::npos);
    }
}

BOOST_FIXTURE_TEST_CASE(update_errors, NotesWrite) {
    stored("old");
    expect_api_error([&] { update(kNote, R"({"content": "x"})"); }, 400, "INVALID_PARAMETER", "version");
    expect_api_error([&] { update(kNote, R"({"content": "x", "version": 1.0})"); }, 400,
                     "INVALID_PARAMETER", "version");
    expect_api_error([&] { update(kNote, R"({"content": "x", "version": 0})"); }, 400,
                     "INVALID_PARAMETER", "version");
    expect_api_error([&] { update(kNote, R"({"version": 3})"); }, 400, "INVALID_PARAMETER", "content");
    expect_api_error([&] { update("not-a-uuid", R"({"content": "x", "version": 3})"); }, 400,
                     "INVALID_PARAMETER", "note_id");
    expect_api_error([&] { update(kBox, R"({"content": "x", "version": 3})"); }, 404, "NOT_FOUND");
    store.forced = NoteWriteStatus::UpdatedBeforeCreated;
    expect_api_error([&] { update(kNote, R"({"content": "x", "version": 3})"); }, 400,
                     "INVALID_PARAMETER", "updated_at");
    store.notes[kNote].trashed_us = 5;
    expect_api_error([&] { update(kNote, R"({"content": "x", "version": 3})"); }, 409, "NOTE_TRASHED");
}

BOOST_FIXTURE_TEST_CASE(get_answers_every_field_with_an_etag, NotesWrite) {
    stored("body");
    const HttpResponse r = get(kNote);
    // the row, links and attachments read in one view of the database
    BOOST_CHECK_EQUAL(store.views_begun, 1);
    BOOST_CHECK((store.finds_in_view == std::vector<bool>{true}));
    BOOST_CHECK(!store.in_view);
    const Json::Value v = ok_json(r);
    std::set<std::string> fields = kCreateFields;
    fields.insert({"trashed_at", "audio_recording_ids", "attachment_metadata"});
    BOOST_CHECK(keys(v) == fields);
    // images and PDFs (by extension, query ignored) are attachments the metadata lists
    BOOST_REQUIRE_EQUAL(v["attachment_metadata"].size(), 2u);
    BOOST_CHECK_EQUAL(v["attachment_metadata"][0]["attachment_kind"].asString(), "image");
    BOOST_CHECK_EQUAL(v["attachment_metadata"][1]["attachment_kind"].asString(), "pdf");
    BOOST_CHECK(v["attachment_metadata"][1]["page_count"].isNull());
    std::string etag;
    for (const auto& [k, val] : r.headers)
        if (k == "ETag") etag = val;
    BOOST_REQUIRE(etag.size() > 2 && etag.front() == '"');
    for (const std::string& match : {etag, "W/" + etag, "\"other\", " + etag, std::string("*")}) {
        const HttpResponse not_modified = get(kNote, match);
        BOOST_CHECK_EQUAL(not_modified.status, 304);
        BOOST_CHECK(not_modified.body.empty());
    }
    BOOST_CHECK_EQUAL(get(kNote, "\"other\"").status, 200);
    store.notes[kNote].trashed_us = 1735689600000000LL;  // any change of the answer: a new ETag
    const HttpResponse trashed = get(kNote, etag);
    BOOST_CHECK_EQUAL(ok_json(trashed)["trashed_at"].asString(), "2025-01-01T00:00:00Z");
    expect_api_error([&] { get(kBox); }, 404, "NOT_FOUND");
    expect_api_error([&] { get("x"); }, 400, "INVALID_PARAMETER", "note_id");
}

BOOST_FIXTURE_TEST_CASE(trash_restore_delete_acknowledge, NotesWrite) {
    stored("body");
    auto call = [&](const std::string& method, const std::string& path) {
        const HttpRequest r = json_request(method, path);
        const Route rt = route_of(r);
        if (rt.endpoint == Endpoint::TrashNote) return trash_note(r, rt, who, store);
        if (rt.endpoint == Endpoint::RestoreNote) return restore_note(r, rt, who, store);
        return delete_note(r, rt, who, store);
    };
    for (const char* suffix : {"/trash", "/trash", "/restore", "/restore"}) {
        const Json::Value v = ok_json(call("POST", "/v2/notes/" + kNote + suffix));
        BOOST_CHECK(keys(v) == std::set<std::string>{"request_id"});
    }
    BOOST_CHECK(!store.notes[kNote].trashed_us);
    expect_api_error([&] { call("POST", "/v2/notes/" + kBox + "/trash"); }, 404, "NOT_FOUND");
    expect_api_error([&] { call("POST", "/v2/notes/" + kBox + "/restore"); }, 404, "NOT_FOUND");
    BOOST_CHECK(keys(ok_json(call("DELETE", "/v2/notes/" + kNote))) == std::set<std::string>{"request_id"});
    expect_api_error([&] { call("DELETE", "/v2/notes/" + kNote); }, 404, "NOT_FOUND");
}

BOOST_FIXTURE_TEST_CASE(created_at_moves_only_earlier, NotesWrite) {
    stored("body", 1735689600000000LL);
    auto set = [&](const std::string& body) {
        const HttpRequest r = json_request("PATCH", "/v2/notes/" + kNote + "/created-at", body);
        return set_note_created(r, route_of(r), who, store);
    };
    expect_api_error([&] { set("{}"); }, 400, "INVALID_PARAMETER", "created_at");
    expect_api_error([&] { set(R"({"created_at": "2025-01-01T00:00:00Z"})"); }, 400,
                     "INVALID_PARAMETER", "created_at");
    const Json::Value v = ok_json(set(R"({"created_at": "2024-12-31T00:00:00Z"})"));
    BOOST_CHECK_EQUAL(v["created_at"].asString(), "2024-12-31T00:00:00Z");
    BOOST_CHECK_EQUAL(v["version"].asInt(), 3);
    BOOST_CHECK(v.isMember("attachment_metadata"));  // the GET response's fields
    store.notes[kNote].trashed_us = 1;
    expect_api_error([&] { set(R"({"created_at": "2024-01-01T00:00:00Z"})"); }, 409, "NOTE_TRASHED");
}

BOOST_AUTO_TEST_SUITE_END()
