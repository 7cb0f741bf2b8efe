// GET /v2/notes/{note_id}/related-notes and POST /v2/notes/extended-search (contract section
// 10): the search engine (src/search) with a note's own terms, and with cursor pages.
#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "api/body_fields.hpp"
#include "api/cursor.hpp"
#include "api/errors.hpp"
#include "api/handlers/handlers.hpp"
#include "api/handlers/write_render.hpp"
#include "api/params.hpp"
#include "api/query_string.hpp"
#include "api/render.hpp"
#include "api/router.hpp"
#include "base/phase_clock.hpp"
#include "base/util.hpp"
#include "search/extended.hpp"
#include "search/query.hpp"
#include "search/snippet.hpp"
#include "search/topk.hpp"
#include "store/store.hpp"

namespace notesd {
namespace {

constexpr long long kRelatedDefault = 10;
constexpr long long kRelatedMax = 20;
constexpr long long kExtendedDefault = 10;
constexpr long long kExtendedMax = 100;
constexpr std::size_t kRelevanceWindow = 1000;  // RELEVANCE pages through the best this many
constexpr std::size_t kMaxExcluded = 100;
constexpr std::size_t kMaxCollectionIds = 100;
constexpr std::size_t kQueryChars = 1000;

long long score_bits(double score) {
    long long bits = 0;
    std::memcpy(&bits, &score, sizeof bits);
    return bits;
}

double score_of(long long bits) {
    double score = 0;
    std::memcpy(&score, &bits, sizeof score);
    return score;
}

ApiError bad_cursor() {
    return ApiError(400, "INVALID_CURSOR",
                    "next_page_cursor was altered, belongs to another user, or was issued for "
                    "another query, sort_by or filters",
                    "next_page_cursor");
}

std::string sorted_list(std::vector<std::string> ids) {
    std::sort(ids.begin(), ids.end());
    std::string out;
    for (const std::string& id : ids) out += id + ",";
    return out;
}

struct ExtendedCommand {
    std::string text;
    ParsedQuery query;
    int limit = static_cast<int>(kExtendedDefault);
    bool by_date = false;
    std::optional<std::string> cursor;
    SearchFilter filter;
    std::vector<std::string> excluded;
    /// What a cursor is bound to: the endpoint, the order, the analysed query, every filter.
    std::string scope() const {
        return std::string("extended-search|s=") + (by_date ? "DATE" : "RELEVANCE") +
               "|q=" + query.canonical() + "|c=" + sorted_list(filter.collection_ids) +
               "|x=" + sorted_list(excluded) + "|up=" + std::to_string(filter.updated.min_us) +
               "," + std::to_string(filter.updated.max_us);
    }
};

ExtendedCommand parse_extended(const Json::Value& body) {
    const BodyFields f(body);
    ExtendedCommand c;
    c.text = f.req_string("query", 1, kQueryChars);
    if (c.text.find_first_not_of(" \t\r\n\f\v") == std::string::npos)
        throw invalid_parameter("query", "query must contain at least one non-whitespace character");
    c.query = parse_query(c.text);
    c.limit = static_cast<int>(f.opt_int("limit", 1, kExtendedMax).value_or(kExtendedDefault));
    if (auto s = f.opt_string("sort_by", 0, 32)) {
        if (*s == "DATE") c.by_date = true;
        else if (*s != "RELEVANCE")
            throw invalid_parameter("sort_by", "sort_by must be RELEVANCE or DATE");
    }
    // Any length: a string notesd did not issue is INVALID_CURSOR (contract section 6) however
    // long, and the body's own limit bounds it.
    if (auto s = f.opt_string("next_page_cursor", 0, 1 << 20); s && !s->empty()) c.cursor = s;
    c.filter.collection_ids = f.uuid_array("filter_by_collection_ids", kMaxCollectionIds);
    std::sort(c.filter.collection_ids.begin(), c.filter.collection_ids.end());
    c.excluded = f.uuid_array("exclude_note_ids", kMaxExcluded);
    if (auto t = f.opt_time("filter_by_updated_after")) c.filter.updated.min_us = *t;
    if (auto t = f.opt_time("filter_by_updated_before")) c.filter.updated.max_us = *t;
    return c;
}

struct Page {
    std::vector<RankedNote> notes;
    std::optional<std::string> next;  // cursor text
};

// The best kRelevanceWindow matches (excluded ones left out), ranked afresh on every page; a
// page starts after the cursor's (score, updated_at, id) in that order.
Page relevance_page(SearchStore& store, const Principal& who, const ExtendedCommand& cmd,
                    const std::optional<CursorState>& at, const CursorCodec& cursors,
                    const std::string& scope) {
    std::vector<RankedNote> ranked;
    {
        ReadScope view(store);
        ranked = ranked_notes(store, who.user_id, cmd.query, cmd.filter,
                              kRelevanceWindow + cmd.excluded.size());
    }
    const std::unordered_set<std::string> excluded(cmd.excluded.begin(), cmd.excluded.end());
    ranked.erase(std::remove_if(ranked.begin(), ranked.end(),
                                [&](const RankedNote& n) { return excluded.count(n.id) > 0; }),
                 ranked.end());
    if (ranked.size() > kRelevanceWindow) ranked.resize(kRelevanceWindow);
    auto from = ranked.begin();
    if (at) {
        const RankedNote last{at->id, at->tie.value_or(0), score_of(at->sort_us)};
        from = std::find_if(ranked.begin(), ranked.end(),
                            [&](const RankedNote& n) { return ranks_before(last, n); });
    }
    Page p;
    const auto to = ranked.end() - from > cmd.limit ? from + cmd.limit : ranked.end();
    p.notes.assign(from, to);
    if (to != ranked.end()) {
        const RankedNote& l = p.notes.back();
        CursorState s{score_bits(l.score), l.id, 0, l.updated_us};
        p.next = cursors.encode(s, who.user_id, scope);
    }
    return p;
}

// Every match, newest first, a keyset page at a time.
Page date_page(SearchStore& store, const Principal& who, const ExtendedCommand& cmd,
               const std::optional<CursorState>& at, const CursorCodec& cursors,
               const std::string& scope) {
    std::optional<PageKey> after;
    if (at) after = PageKey{at->sort_us, at->id};
    const std::unordered_set<std::string> excluded(cmd.excluded.begin(), cmd.excluded.end());
    Page p;
    {
        ReadScope view(store);
        p.notes = matches_by_date(store, who.user_id, cmd.query, cmd.filter, after,
                                  static_cast<std::size_t>(cmd.limit) + 1, excluded);
    }
    if (p.notes.size() > static_cast<std::size_t>(cmd.limit)) {
        p.notes.resize(static_cast<std::size_t>(cmd.limit));
        p.next = cursors.encode(CursorState{p.notes.back().updated_us, p.notes.back().id, 0, {}},
                                who.user_id, scope);
    }
    return p;
}

std::vector<std::string> ids_of(const std::vector<RankedNote>& notes) {
    std::vector<std::string> ids;
    for (const RankedNote& n : notes) ids.push_back(n.id);
    return ids;
}

}  // namespace

HttpResponse related_notes(const HttpRequest& req, const Route& route, const Principal& who,
                           SearchStore& store) {
    const std::string id = path_uuid("note_id", route.params.at(0));
    const QueryArgs args(req.query);
    long long limit = kRelatedDefault;
    if (auto v = args.get("limit"))
        limit = parse_int_param("limit", *v, 1, kRelatedMax).value_or(kRelatedDefault);
    std::vector<RankedNote> related;
    std::vector<SearchHit> hits;
    mark_phase(Phase::rank);  // the note's terms and the ranking, reads included
    {
        ReadScope view(store);
        const std::vector<IndexedNote> self = store.indexed_notes(who.user_id, {id});
        if (self.empty())
            throw ApiError(404, "NOT_FOUND", "no such note: note_id names none of your live notes");
        const ParsedQuery query = distinctive_query(store, who.user_id, self[0]);
        related = ranked_notes(store, who.user_id, query, SearchFilter{},
                               static_cast<std::size_t>(limit) + 1);
        related.erase(std::remove_if(related.begin(), related.end(),
                                     [&](const RankedNote& n) { return n.id == id; }),
                      related.end());
        if (related.size() > static_cast<std::size_t>(limit))
            related.resize(static_cast<std::size_t>(limit));
        hits = store.notes_by_ids(who.user_id, ids_of(related), false);
    }
    JsonOut j;
    j.begin_object().key("request_id").str(req.request_id).key("results").begin_array();
    std::size_t k = 0;
    for (const SearchHit& h : hits) {
        while (k < related.size() && related[k].id != h.note.id) ++k;  // same order, none lost
        const NoteItem& n = h.note;
        j.begin_object().key("id").str(n.id).key("title").str(n.title);
        j.key("snippet").str(n.snippet).key("collection_ids").str_array(n.collection_ids);
        j.key("created_at").str(format_time(n.created_us));
        j.key("updated_at").str(format_time(n.updated_us));
        j.key("score").real(k < related.size() ? related[k].score : 0).end_object();
    }
    j.end_array().key("total").num(static_cast<long long>(hits.size())).end_object();
    return json_ok(j.take());
}

HttpResponse extended_search(const HttpRequest& req, const Principal& who, SearchStore& store,
                             const CursorCodec& cursors) {
    const Json::Value body = parse_body_object(req, false);
    const ExtendedCommand cmd = parse_extended(body);
    const std::string scope = cmd.scope();
    std::optional<CursorState> at;
    if (cmd.cursor) {
        at = cursors.decode(*cmd.cursor, who.user_id, scope);
        // a relevance cursor carries the updated_at tie, a date cursor does not
        if (!at || at->tie.has_value() == cmd.by_date) throw bad_cursor();
    }
    mark_phase(Phase::rank);  // the ranking or the date walk, reads included
    const Page page = cmd.by_date ? date_page(store, who, cmd, at, cursors, scope)
                                  : relevance_page(store, who, cmd, at, cursors, scope);
    std::vector<SearchHit> hits;
    mark_phase(Phase::store);
    {
        ReadScope view(store);
        hits = store.notes_by_ids(who.user_id, ids_of(page.notes), false);
    }
    SnippetMaker snippets(cmd.query);
    JsonOut j;
    j.begin_object().key("request_id").str(req.request_id).key("results").begin_array();
    for (const SearchHit& h : hits) {
        const NoteItem& n = h.note;
        std::string snippet = snippets.snippet(h.plain_text);
        j.begin_object().key("id").str(n.id).key("title").str(n.title);
        j.key("snippet").str(snippet.empty() ? n.snippet : snippet);
        j.key("note_summary").null();
        j.key("created_at").str(format_time(n.created_us));
        j.key("updated_at").str(format_time(n.updated_us));
        j.key("attachment_matches").begin_array().end_array().end_object();
    }
    j.end_array().key("has_next_page").boolean(page.next.has_value());
    j.key("next_page_cursor");
    if (page.next) j.str(*page.next);
    else j.null();
    j.end_object();
    return json_ok(j.take());
}

}  // namespace notesd
