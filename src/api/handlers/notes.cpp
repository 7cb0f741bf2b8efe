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
    std::vector<NoteItem> rows;
    PageStart start;
    {
        ReadScope view(views);  // a first page's total counts the notes its page shows
        start = start_page(cmd.page, cursors, who.user_id, scope,
                           [&] { return notes.count_notes(who.user_id, cmd.filter); });
        // One row more than the page tells whether another page follows without a second query.
        rows = notes.list_notes(who.user_id, cmd.filter, cmd.order_by, start.after, cmd.limit + 1,
                                cmd.include_content);
    }
    const auto next = finish_page(rows, cmd.limit, cmd.order_by, start.total, cursors, who.user_id, scope);
    mark_phase(Phase::render);
    HttpResponse r;
    r.body = render_note_page(req.request_id, rows, start.total, next);
    return r;
}

}  // namespace notesd
