#include "api/params.hpp"
#include "api/query_string.hpp"
#include "api/render.hpp"
#include "store/store.hpp"
#include "api/handlers/handlers.hpp"
#include "api/handlers/paging.hpp"
#include "base/phase_clock.hpp"

namespace notesd {

HttpResponse list_collections(const HttpRequest& req, const Principal& who, NoteReader& notes,
                              ReadViews& views, const CursorCodec& cursors) {
    const ListCollectionsCommand cmd = parse_list_collections(QueryArgs(req.query));
    const std::string scope = cmd.scope();
    mark_phase(Phase::store);
    std::optional<ReadScope> view;  // a first page's total and rows in one view, as list_notes
    if (!cmd.page) view.emplace(views);
    const PageStart start = start_page(cmd.page, cursors, who.user_id, scope, [&] {
        return notes.count_collections(who.user_id, cmd.filter);
    });
    auto rows = notes.list_collections(who.user_id, cmd.filter, cmd.order_by, start.after,
                                       cmd.limit + 1);
    view.reset();
    const auto next = finish_page(rows, cmd.limit, cmd.order_by, start.total, cursors, who.user_id, scope);
    mark_phase(Phase::render);
    HttpResponse r;
    r.body = render_collection_page(req.request_id, rows, start.total, next);
    return r;
}

}  // namespace notesd
