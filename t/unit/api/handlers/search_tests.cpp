// POST /v2/notes/search (src/api/handlers/search.cpp) against a fake SearchStore: an index
// computed from a few notes in memory, snapshots in a map. The ranking is the real one
// (search/); what is checked here is the handler's part: snapshots, paging, read views.
#include <boost/test/unit_test.hpp>

#include <json/json.h>

#include <algorithm>
#include <map>
#include <functional>
#include <iterator>
#include <set>
#include <sstream>

#include "api/errors.hpp"
#include "api/handlers/handlers.hpp"
#include "api/json_io.hpp"
#include "expect_error.hpp"
#include "index/positions.hpp"
#include "index/note_index.hpp"
#include "store/store.hpp"
#include "base/util.hpp"

using namespace notesd;
using notesd::test::expect_api_error;

namespace {

constexpr long long kUser = 7;

// The terms of a space-joined stored field.
std::vector<std::string> words(const std::string& field) {
    std::istringstream in(field);
    return {std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
}

std::vector<int> positions_of(const std::vector<std::string>& field, const std::string& term) {
    std::vector<int> out;
    for (std::size_t i = 0; i < field.size(); ++i)
        if (field[i] == term) out.push_back(static_cast<int>(i));
    return out;
}

// A note with the terms a store derives from its title and plain text.
struct FakeNote : NoteInput {
    std::string title_terms, body_terms;
    long long title_len = 0, body_len = 0;
};

// The search roles over one user's notes; records what the handler does with them.
class FakeSearchStore : public SearchStore {
public:
    std::vector<FakeNote> notes;
    std::map<std::string, SnapshotRecord> snapshots;
    int read_depth = 0, reads_begun = 0, hits_outside_read = 0;
    int writes_inside_read = 0, snapshots_saved = 0, finds = 0;
    std::vector<std::vector<std::string>> hit_requests;

    void add(const std::string& id, const std::string& title, const std::string& content,
             long long updated_us) {
        FakeNote n;
        n.id = id;
        n.title = title;
        n.content = content;
        n.created_us = updated_us;
        n.updated_us = updated_us;
        n.plain_text = content;  // plain text already: no markdown to remove
        NoteTerms t = note_terms(n.title, n.plain_text);
        n.title_terms = std::move(t.title_terms);
        n.body_terms = std::move(t.body_terms);
        n.title_len = t.title_len;
        n.body_len = t.body_len;
        notes.push_back(n);
    }

    SearchCorpus search_corpus(long long user_id) override {
        SearchCorpus c;
        for (const FakeNote& n : mine(user_id)) {
            ++c.notes;
            c.title_tokens += n.title_len;
            c.body_tokens += n.body_len;
        }
        return c;
    }
    std::vector<long long> term_dfs(long long user_id, const std::vector<std::string>& terms) override {
        std::vector<long long> out;
        for (const std::string& t : terms) out.push_back(df(user_id, t));
        return out;
    }
    std::vector<std::pair<std::string, long long>> prefix_terms(long long user_id,
                                                                const std::string& prefix,
                                                                int limit) override {
        std::set<std::string> terms;
        for (const FakeNote& n : mine(user_id))
            for (const std::string& t : words(n.title_terms + " " + n.body_terms))
                if (t.rfind(prefix, 0) == 0) terms.insert(t);
        std::vector<std::pair<std::string, long long>> out;
        for (const std::string& t : terms) out.emplace_back(t, df(user_id, t));
        std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
        if (out.size() > static_cast<std::size_t>(limit)) out.resize(static_cast<std::size_t>(limit));
        return out;
    }
    using SearchIndex::term_postings;
    std::vector<TermPosting> term_postings(long long user_id, const std::string& term,
                                           const SearchFilter&, int limit, bool) override {
        std::vector<TermPosting> out;
        for (const FakeNote& n : mine(user_id))
            if (auto p = posting(n, term)) out.push_back(*p);
        std::sort(out.begin(), out.end(), [](const TermPosting& a, const TermPosting& b) {
            if (a.updated_us != b.updated_us) return a.updated_us > b.updated_us;
            return a.uid_hi != b.uid_hi ? a.uid_hi > b.uid_hi : a.uid_lo > b.uid_lo;
        });
        if (out.size() > static_cast<std::size_t>(limit)) out.resize(static_cast<std::size_t>(limit));
        return out;
    }
    std::vector<TermPosting> postings_at(long long user_id, const std::string& term,
                                         const std::vector<PostingNote>& at) override {
        std::vector<TermPosting> out;
        for (const FakeNote& n : mine(user_id))
            if (auto p = posting(n, term))
                for (const PostingNote& k : at)
                    if (k.updated_us == p->updated_us && k.uid_hi == p->uid_hi && k.uid_lo == p->uid_lo)
                        out.push_back(*p);
        return out;
    }
    std::vector<IndexedNote> indexed_notes(long long user_id, const std::vector<std::string>& ids) override {
        std::vector<IndexedNote> out;
        for (const FakeNote& n : mine(user_id))
            if (std::find(ids.begin(), ids.end(), n.id) != ids.end())
                out.push_back(IndexedNote{n.id, n.updated_us, n.title_terms, n.body_terms});
        return out;
    }
    std::vector<SearchHit> notes_by_ids(long long user_id, const std::vector<std::string>& ids,
                                        bool with_content) override {
        hit_requests.push_back(ids);
        if (read_depth == 0) ++hits_outside_read;
        std::vector<SearchHit> out;
        for (const std::string& id : ids)
            for (const FakeNote& n : mine(user_id))
                if (n.id == id) {
                    NoteItem item;
                    item.id = n.id;
                    item.title = n.title;
                    item.snippet = "stored snippet";
                    if (with_content) item.content = n.content;
                    item.created_us = n.created_us;
                    item.updated_us = n.updated_us;
                    out.push_back(SearchHit{item, n.plain_text});
                }
        return out;
    }
    void save_snapshot(const SnapshotRecord& s) override {
        if (read_depth > 0) ++writes_inside_read;
        ++snapshots_saved;
        snapshots[s.id] = s;
    }
    std::optional<SnapshotRecord> find_snapshot(long long user_id, const std::string& id,
                                                long long now_us) override {
        ++finds;
        auto it = snapshots.find(id);
        if (it == snapshots.end() || it->second.user_id != user_id || it->second.expires_us <= now_us)
            return std::nullopt;
        return it->second;
    }
    int purge_snapshots(long long, int) override {
        if (read_depth > 0) ++writes_inside_read;
        return 0;
    }
    void begin_read() override {
        ++read_depth;
        ++reads_begun;
    }
    void end_read() noexcept override { --read_depth; }

private:
    std::vector<FakeNote> mine(long long user_id) const {
        return user_id == kUser ? notes : std::vector<FakeNote>{};
    }
    long long df(long long user_id, const std::string& term) const {
        long long n = 0;
        for (const FakeNote& note : mine(user_id))
            if (posting(note, term)) ++n;
        return n;
    }
    static std::optional<TermPosting> posting(const FakeNote& n, const std::string& term) {
        const std::vector<int> title = positions_of(words(n.title_terms), term);
        const std::vector<int> body = positions_of(words(n.body_terms), term);
        if (title.empty() && body.empty()) return std::nullopt;
        TermPosting p;
        uuid_halves(n.id, p.uid_hi, p.uid_lo);
        p.updated_us = n.updated_us;
        p.title_tf = static_cast<int>(title.size());
        p.body_tf = static_cast<int>(body.size());
        p.title_len = static_cast<int>(n.title_len);
        p.body_len = static_cast<int>(n.body_len);
        p.positions = encode_positions(title, body);
        return p;
    }
};

const std::string kTitleMatch = "00000000-0000-4000-8000-000000000001";
const std::string kBodyMatch = "00000000-0000-4000-8000-000000000002";
const std::string kNoMatch = "00000000-0000-4000-8000-000000000003";

struct SearchFixture {
    FakeSearchStore store;
    Principal who{kUser, 1};
    SearchSettings settings;

    SearchFixture() {
        store.add(kTitleMatch, "Apple pie", "Bake the pie for an hour.", 1700000001000000LL);
        store.add(kBodyMatch, "Banana bread", "Add one apple to the dough.", 1700000003000000LL);
        store.add(kNoMatch, "Carrot soup", "Carrots, onions and stock.", 1700000002000000LL);
    }
    HttpResponse post(const std::string& body, const std::string& content_type = "application/json") {
        HttpRequest req;
        req.method = "POST";
        req.path = "/v2/notes/search";
        req.content_type = content_type;
        req.has_body = true;
        req.body = body;
        req.request_id = "api-request-test";
        return search_notes(req, who, store, settings);
    }
    Json::Value search(const std::string& body) {
        const HttpResponse r = post(body);
        BOOST_REQUIRE_EQUAL(r.status, 200);
        return parse_json_object(r.body);
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(handlers_search)

BOOST_FIXTURE_TEST_CASE(new_search_ranks_saves_a_snapshot_and_reads_the_page, SearchFixture) {
    const Json::Value page = search(R"({"query": "apple", "limit": 1})");
    BOOST_CHECK_EQUAL(page["total"].asInt64(), 2);
    BOOST_REQUIRE_EQUAL(page["results"].size(), 1u);
    BOOST_CHECK_EQUAL(page["results"][0]["id"].asString(), kTitleMatch);  // a title match weighs more
    BOOST_CHECK(page["has_next_page"].asBool());
    BOOST_CHECK_EQUAL(page["offset"].asInt64(), 0);
    BOOST_CHECK_EQUAL(page["limit"].asInt64(), 1);
    BOOST_REQUIRE_EQUAL(store.snapshots_saved, 1);
    const SnapshotRecord& snap = store.snapshots.begin()->second;
    BOOST_CHECK_EQUAL(page["snapshot_id"].asString(), snap.id);
    BOOST_CHECK_EQUAL(snap.user_id, kUser);
    BOOST_CHECK((snap.note_ids == std::vector<std::string>{kTitleMatch, kBodyMatch}));
    BOOST_CHECK_GT(snap.expires_us, snap.created_us);
    // only the page's notes are read, in the ranking's read view (one view: two statements
    // fewer on the servers), which ended, and no write inside it
    BOOST_REQUIRE_EQUAL(store.hit_requests.size(), 1u);
    BOOST_CHECK((store.hit_requests[0] == std::vector<std::string>{kTitleMatch}));
    BOOST_CHECK_EQUAL(store.reads_begun, 1);
    BOOST_CHECK_EQUAL(store.hits_outside_read, 0);
    BOOST_CHECK_EQUAL(store.read_depth, 0);
    BOOST_CHECK_EQUAL(store.writes_inside_read, 0);
}

BOOST_FIXTURE_TEST_CASE(snippet_is_made_from_the_query, SearchFixture) {
    const Json::Value page = search(R"({"query": "dough", "limit": 5})");
    BOOST_REQUIRE_EQUAL(page["results"].size(), 1u);
    const std::string snippet = page["results"][0]["snippet"].asString();
    BOOST_CHECK(snippet.find("dough") != std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(next_page_comes_from_the_snapshot, SearchFixture) {
    const Json::Value first = search(R"({"query": "apple", "limit": 1})");
    const std::string snap = first["snapshot_id"].asString();
    // a note written after the first page does not change the snapshot's ranking
    store.add("00000000-0000-4000-8000-000000000004", "Apple apple apple", "", 1700000009000000LL);
    const Json::Value second =
        search(R"({"query": "apple", "limit": 1, "offset": 1, "snapshot_id": ")" + snap + "\"}");
    BOOST_CHECK_EQUAL(store.snapshots_saved, 1);
    BOOST_CHECK_EQUAL(store.finds, 1);
    BOOST_CHECK_EQUAL(second["total"].asInt64(), 2);
    BOOST_REQUIRE_EQUAL(second["results"].size(), 1u);
    BOOST_CHECK_EQUAL(second["results"][0]["id"].asString(), kBodyMatch);
    BOOST_CHECK(!second["has_next_page"].asBool());
    BOOST_CHECK_EQUAL(second["snapshot_id"].asString(), snap);
}

BOOST_FIXTURE_TEST_CASE(snapshot_of_another_search_or_user_is_refused, SearchFixture) {
    const std::string snap = search(R"({"query": "apple"})")["snapshot_id"].asString();
    expect_api_error([&] { post(R"({"query": "pie", "snapshot_id": ")" + snap + "\"}"); }, 400,
                    "SNAPSHOT_MISMATCH");
    who.user_id = 8;
    expect_api_error([&] { post(R"({"query": "apple", "snapshot_id": ")" + snap + "\"}"); }, 404,
                    "NOT_FOUND");
    BOOST_CHECK_EQUAL(store.snapshots_saved, 1);
}

BOOST_FIXTURE_TEST_CASE(another_users_search_finds_nothing, SearchFixture) {
    who.user_id = 8;
    const Json::Value page = search(R"({"query": "apple"})");
    BOOST_CHECK_EQUAL(page["total"].asInt64(), 0);
    BOOST_CHECK_EQUAL(page["results"].size(), 0u);
    BOOST_CHECK_EQUAL(store.snapshots.begin()->second.user_id, 8);
}

BOOST_FIXTURE_TEST_CASE(bad_requests_touch_nothing, SearchFixture) {
    expect_api_error([&] { post(R"({"query": "apple"})", "text/plain"); }, 415,
                    "UNSUPPORTED_MEDIA_TYPE");
    expect_api_error([&] { post(R"({"query": "  "})"); }, 400, "INVALID_PARAMETER");
    BOOST_CHECK_EQUAL(store.reads_begun, 0);
    BOOST_CHECK_EQUAL(store.snapshots_saved, 0);
    BOOST_CHECK_EQUAL(store.finds, 0);
}

BOOST_AUTO_TEST_SUITE_END()
