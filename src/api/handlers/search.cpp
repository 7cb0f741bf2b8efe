#include "api/body_fields.hpp"
#include "api/errors.hpp"
#include "api/params.hpp"
#include "api/query_string.hpp"
#include "api/render.hpp"
#include "search/snippet.hpp"
#include "search/topk.hpp"
#include "store/store.hpp"
#include "base/phase_clock.hpp"
#include "base/util.hpp"
#include "api/handlers/handlers.hpp"

namespace notesd {
namespace {

constexpr int kPurgePerSearch = 20;  // expired snapshots removed per new one: the table stays small
// Once a purge finds fewer than kPurgePerSearch (caught up), the worker looks again only this
// much later: an expired snapshot is unusable at once (find_snapshot checks the time), and an
// empty purge is still a write transaction per search.
constexpr long long kPurgeIdleUs = 1000000;

// The page [offset, offset + limit) of a snapshot's notes.
std::vector<std::string> page_of(const SnapshotRecord& snap, const SearchCommand& cmd) {
    std::vector<std::string> page;
    const long long total = static_cast<long long>(snap.note_ids.size());
    for (long long i = cmd.offset; i < total && i < cmd.offset + cmd.limit; ++i)
        page.push_back(snap.note_ids[static_cast<std::size_t>(i)]);
    return page;
}

// A new search: ranked, and its page read, in one view of the database (a view is two
// statements on the servers), then kept as a snapshot for the pages after it.
SnapshotRecord new_snapshot(SearchStore& store, const Principal& who, const ParsedQuery& query,
                            const SearchCommand& cmd, const std::string& fingerprint,
                            const SearchSettings& settings, std::vector<SearchHit>& hits) {
    SnapshotRecord rec;
    rec.id = random_id128();
    rec.user_id = who.user_id;
    rec.fingerprint = fingerprint;
    rec.created_us = now_us();
    rec.expires_us = rec.created_us + settings.snapshot_ttl_s * 1000000LL;
    mark_phase(Phase::rank);  // reading postings included: ranking is most of it
    {
        ReadScope view(store);  // the statistics and postings of one state of the database
        rec.note_ids = ranked_note_ids(store, who.user_id, query, cmd.filter);
        mark_phase(Phase::store);
        hits = store.notes_by_ids(who.user_id, page_of(rec, cmd), cmd.include_content);
    }
    store.save_snapshot(rec);
    static long long next_purge_us = 0;  // per worker process, which serves one request at a time
    if (rec.created_us >= next_purge_us &&
        store.purge_snapshots(rec.created_us, kPurgePerSearch) < kPurgePerSearch)
        next_purge_us = rec.created_us + kPurgeIdleUs;
    return rec;
}

}  // namespace

HttpResponse search_notes(const HttpRequest& req, const Principal& who, SearchStore& store,
                          const SearchSettings& settings) {
    const Json::Value body = parse_body_object(req, false);
    const SearchCommand cmd = parse_search(QueryArgs(req.query), body);
    const ParsedQuery query = parse_query(cmd.query);
    // Reuse must repeat the query and filters, compared after normalisation.
    const std::string fingerprint = sha256_hex("v1|" + query.canonical() + "|" + cmd.filter_scope());

    SnapshotRecord snap;
    std::vector<SearchHit> hits;
    if (cmd.snapshot_id) {
        mark_phase(Phase::store);
        // Outside the view: SQLite attaches the snapshots file at its first use, which it
        // cannot do in a transaction.
        auto found = store.find_snapshot(who.user_id, *cmd.snapshot_id, now_us());
        if (!found)
            throw ApiError(404, "NOT_FOUND", "snapshot_id is unknown or has expired; search again "
                                             "without snapshot_id");
        if (found->fingerprint != fingerprint)
            throw ApiError(400, "SNAPSHOT_MISMATCH",
                           "snapshot_id belongs to a search with another query or other filters",
                           "snapshot_id");
        snap = std::move(*found);
        ReadScope view(store);
        hits = store.notes_by_ids(who.user_id, page_of(snap, cmd), cmd.include_content);
    } else {
        snap = new_snapshot(store, who, query, cmd, fingerprint, settings, hits);
    }
    const long long total = static_cast<long long>(snap.note_ids.size());
    std::vector<NoteItem> items;
    mark_phase(Phase::render);
    SnippetMaker snippets(query);
    for (SearchHit& hit : hits) {
        std::string snippet = snippets.snippet(hit.plain_text);
        if (!snippet.empty()) hit.note.snippet = std::move(snippet);
        items.push_back(std::move(hit.note));
    }
    HttpResponse r;
    r.body = render_search_page(req.request_id, items, total, cmd.offset, cmd.limit,
                                cmd.offset + cmd.limit < total, snap.id);
    return r;
}

}  // namespace notesd
