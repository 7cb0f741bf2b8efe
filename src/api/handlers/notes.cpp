#include "api/params.hpp"
#include "api/query_string.hpp"
#include "api/render.hpp"
#include "store/store.hpp"
#include "api/handlers/handlers.hpp"
#include "api/handlers/paging.hpp"
#include "base/phase_clock.hpp"

namespace notesd {

HttpResponse list_notes(const HttpRequest& req, const Principal& who, NoteReader& notes,
                        ReadViews& views, const CursorCodec& cursors) {
    const ListNotesCommand cmd = parse_list_notes(QueryArgs(req.query));
    const std::string scope = cmd.scope();
    mark_phase(Phase::store);
    // A first page's total counts the notes its page shows: both read in one view. A later
    // page's total comes from its cursor, and its rows are one statement.
    std::optional<ReadScope> view;
    if (!cmd.page) view.emplace(views);
    const PageStart start = start_page(cmd.page, cursors, who.user_id, scope,
                                       [&] { return notes.count_notes(who.user_id, cmd.filter); });
    // One row more than the page tells whether another page follows without a second query.
    auto rows = notes.list_notes(who.user_id, cmd.filter, cmd.order_by, start.after, cmd.limit + 1,
                                 cmd.include_content);
    view.reset();
    const auto next = finish_page(rows, cmd.limit, cmd.order_by, start.total, cursors, who.user_id, scope);
    mark_phase(Phase::render);
    HttpResponse r;
    r.body = render_note_page(req.request_id, rows, start.total, next);
    return r;
}

}  // namespace notesd
