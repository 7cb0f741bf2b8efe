#include "../cursor.hpp"
#include "../errors.hpp"
#include "../params.hpp"
#include "../query_string.hpp"
#include "../render.hpp"
#include "../store/store.hpp"
#include "handlers.hpp"

namespace notesd {

HttpResponse list_collections(const HttpRequest& req, const Principal& who, Store& store,
                              const CursorCodec& cursors) {
    const ListCollectionsCommand cmd = parse_list_collections(QueryArgs(req.query));
    const std::string scope = cmd.scope();
    std::optional<PageKey> after;
    long long total = 0;
    if (cmd.page) {
        auto state = cursors.decode(*cmd.page, who.user_id, scope);
        if (!state) throw invalid_cursor();
        after = PageKey{state->sort_us, state->id};
        total = state->total;
    } else {
        total = store.count_collections(who.user_id, cmd.filter);
    }
    auto rows = store.list_collections(who.user_id, cmd.filter, cmd.order_by, after, cmd.limit + 1);
    std::optional<std::string> next;
    if (static_cast<int>(rows.size()) > cmd.limit) {
        rows.resize(cmd.limit);
        const CollectionItem& last = rows.back();
        long long sort = cmd.order_by == OrderBy::CreatedAt ? last.created_us : last.updated_us;
        next = cursors.encode({sort, last.id, total}, who.user_id, scope);
    }
    HttpResponse r;
    r.body = render_collection_page(req.request_id, rows, total, next);
    return r;
}

}  // namespace notesd
