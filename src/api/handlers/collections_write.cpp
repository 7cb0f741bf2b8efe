// One collection (read, create, change, delete), collection search, and the links between
// notes and collections (contract section 10).
#include <algorithm>

#include "api/body_fields.hpp"
#include "api/errors.hpp"
#include "api/handlers/handlers.hpp"
#include "api/handlers/write_render.hpp"
#include "api/params.hpp"
#include "api/render.hpp"
#include "api/router.hpp"
#include "base/phase_clock.hpp"
#include "base/util.hpp"
#include "search/extended.hpp"
#include "store/store.hpp"

namespace notesd {
namespace {

constexpr std::size_t kTitleChars = 1000;
constexpr std::size_t kDescriptionChars = 10000;
constexpr std::size_t kQueryChars = 1000;
constexpr int kSearchResults = 50;
// Collections read per store call while a collection search gathers its candidates.
constexpr int kSearchPage = 1000;

ApiError no_collection(const std::string& field) {
    return ApiError(404, "NOT_FOUND", "no such collection: " + field + " names none of yours");
}
ApiError no_note() { return ApiError(404, "NOT_FOUND", "no such note: note_id names none of your live notes"); }

// The create response (and PATCH's): without note_count.
std::string render_collection(const std::string& request_id, const CollectionItem& c,
                              bool with_count) {
    JsonOut j;
    j.begin_object().key("request_id").str(request_id);
    j.key("id").str(c.id).key("title").str(c.title).key("description");
    if (c.description) j.str(*c.description);
    else j.null();
    if (with_count) j.key("note_count").num(c.note_count);
    j.key("created_at").str(format_time(c.created_us));
    j.key("updated_at").str(format_time(c.updated_us));
    j.end_object();
    return j.take();
}

// "" is no description (PATCH clears with it; a create stores the same null).
std::optional<std::string> description_of(const std::string& text) {
    return text.empty() ? std::nullopt : std::optional<std::string>(text);
}

// The errors of a link write that did not happen.
void check_link(CollectionWrite w, const char* collection_field) {
    switch (w) {
        case CollectionWrite::Done: return;
        case CollectionWrite::NoCollection: throw no_collection(collection_field);
        case CollectionWrite::NoTarget: throw no_collection("target_collection_id");
        case CollectionWrite::NoNote: throw no_note();
        case CollectionWrite::NotLinked:
            throw ApiError(404, "NOT_FOUND",
                           "the note is not in the collection source_collection_id names");
        default: throw std::logic_error("unexpected collection write outcome");
    }
}

// PUT (link) or DELETE (unlink) /v2/collections/{collection_id}/notes/{note_id}.
HttpResponse change_link(const HttpRequest& req, const Route& route, const Principal& who,
                         CollectionEditor& store, bool link) {
    const std::string cid = path_uuid("collection_id", route.params.at(0));
    const std::string nid = path_uuid("note_id", route.params.at(1));
    mark_phase(Phase::store);
    check_link(link ? store.link_note(who.user_id, cid, nid) : store.unlink_note(who.user_id, cid, nid),
               "collection_id");
    return acknowledgement(req.request_id);
}

}  // namespace

HttpResponse create_collection(const HttpRequest& req, const Principal& who,
                               CollectionEditor& store) {
    const Json::Value body = parse_body_object(req, false);
    const BodyFields f(body);
    CollectionInput c;
    c.title = f.req_string("title", 1, kTitleChars);
    c.id = f.opt_uuid("id").value_or(new_uuid());
    if (auto d = f.opt_string("description", 0, kDescriptionChars)) c.description = description_of(*d);
    const WriteTimes t = create_times(f, now_us());
    c.created_us = t.created_us;
    c.updated_us = t.updated_us;
    mark_phase(Phase::store);
    if (store.create_collection(who.user_id, c) == CollectionWrite::Conflict)
        throw ApiError(409, "CONFLICT", "you already have a collection with this id", "id");
    const CollectionItem item{c.id, c.title, c.description, c.created_us, c.updated_us, 0};
    return json_ok(render_collection(req.request_id, item, false));
}

HttpResponse get_collection(const HttpRequest& req, const Route& route, const Principal& who,
                            CollectionEditor& store) {
    const std::string id = path_uuid("collection_id", route.params.at(0));
    mark_phase(Phase::store);
    const std::optional<CollectionItem> c = store.find_collection(who.user_id, id);
    if (!c) throw no_collection("collection_id");
    return json_ok(render_collection(req.request_id, *c, true));
}

HttpResponse update_collection(const HttpRequest& req, const Route& route, const Principal& who,
                               CollectionEditor& store) {
    const std::string id = path_uuid("collection_id", route.params.at(0));
    const Json::Value body = parse_body_object(req, true);
    const BodyFields f(body);
    CollectionPatch p;
    p.title = f.opt_string("title", 1, kTitleChars);
    if (auto d = f.opt_string("description", 0, kDescriptionChars)) p.description = description_of(*d);
    const long long now = now_us();
    p.updated_us = write_time(f, "updated_at", now).value_or(now);
    CollectionItem item;
    mark_phase(Phase::store);
    switch (store.update_collection(who.user_id, id, p, &item)) {
        case CollectionWrite::Done: break;
        case CollectionWrite::NoCollection: throw no_collection("collection_id");
        case CollectionWrite::UpdatedBeforeCreated:
            throw invalid_parameter("updated_at", "updated_at must not be earlier than the "
                                                  "collection's created_at");
        default: throw std::logic_error("unexpected collection write outcome");
    }
    return json_ok(render_collection(req.request_id, item, false));
}

HttpResponse delete_collection(const HttpRequest& req, const Route& route, const Principal& who,
                               CollectionEditor& store) {
    const std::string id = path_uuid("collection_id", route.params.at(0));
    mark_phase(Phase::store);
    if (store.delete_collection(who.user_id, id) != CollectionWrite::Done)
        throw no_collection("collection_id");
    return acknowledgement(req.request_id);
}

HttpResponse search_collections(const HttpRequest& req, const Principal& who, NoteReader& notes,
                                ReadViews& views) {
    const Json::Value body = parse_body_object(req, true);
    const BodyFields f(body);
    // A query with nothing but blanks is no query: the most recently updated come back.
    std::optional<std::string> query = f.opt_string("query", 0, kQueryChars);
    if (query && query->find_first_not_of(" \t\r\n\f\v") == std::string::npos) query.reset();
    CollectionFilter filter;
    if (auto t = f.opt_time("filter_by_created_after")) filter.created.min_us = *t;
    if (auto t = f.opt_time("filter_by_created_before")) filter.created.max_us = *t;
    if (auto t = f.opt_time("filter_by_updated_after")) filter.updated.min_us = *t;
    if (auto t = f.opt_time("filter_by_updated_before")) filter.updated.max_us = *t;

    mark_phase(Phase::store);
    std::vector<CollectionItem> found;
    if (!query) {
        found = notes.list_collections(who.user_id, filter, OrderBy::UpdatedAt, std::nullopt,
                                       kSearchResults);
    } else {
        // Every collection within the bounds, most recently updated first (the ties' order).
        std::vector<CollectionItem> all;
        {
            ReadScope view(views);
            std::optional<PageKey> after;
            for (;;) {
                std::vector<CollectionItem> page = notes.list_collections(
                    who.user_id, filter, OrderBy::UpdatedAt, after, kSearchPage);
                const bool last = static_cast<int>(page.size()) < kSearchPage;
                if (!page.empty()) after = PageKey{page.back().updated_us, page.back().id};
                std::move(page.begin(), page.end(), std::back_inserter(all));
                if (last) break;
            }
        }
        std::vector<CollectionText> texts;
        for (const CollectionItem& c : all) texts.push_back(CollectionText{c.title, c.description.value_or("")});
        for (std::size_t i : rank_collection_texts(*query, texts, kSearchResults))
            found.push_back(std::move(all[i]));
    }
    JsonOut j;
    j.begin_object().key("request_id").str(req.request_id).key("results").begin_array();
    for (const CollectionItem& c : found) write_collection(j, c);
    j.end_array().key("total").num(static_cast<long long>(found.size())).end_object();
    return json_ok(j.take());
}

HttpResponse link_note(const HttpRequest& req, const Route& route, const Principal& who,
                       CollectionEditor& store) {
    return change_link(req, route, who, store, true);
}

HttpResponse unlink_note(const HttpRequest& req, const Route& route, const Principal& who,
                         CollectionEditor& store) {
    return change_link(req, route, who, store, false);
}

HttpResponse move_note(const HttpRequest& req, const Route& route, const Principal& who,
                       CollectionEditor& store) {
    const std::string source = path_uuid("source_collection_id", route.params.at(0));
    const std::string nid = path_uuid("note_id", route.params.at(1));
    const Json::Value body = parse_body_object(req, false);
    const std::string target = BodyFields(body).req_uuid("target_collection_id");
    mark_phase(Phase::store);
    check_link(store.move_note(who.user_id, source, nid, target), "source_collection_id");
    return acknowledgement(req.request_id);
}

}  // namespace notesd
