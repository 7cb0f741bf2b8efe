// RowIndex within a read view: whether the user has postings rows at all is looked up once per
// view. After an import every note is in a segment, and a search's terms (up to one per prefix
// expansion) then skip a postings statement each: a round trip each on the server backends.
#include "store/index_rows.hpp"

namespace notesd::detail {

soci::statement& RowIndexStatements::any_rows() {
    return prepared(any_rows_, [&] {
        return Prep(session, "SELECT user_id FROM postings WHERE user_id = :u" + dialect.limit_clause())
            .out(params.any_user).in(params.user_id, "u").in(params.one, "lim").done();
    });
}

bool RowIndex::may_have_rows(long long user_id) {
    // Outside a view the look-up would cost what it saves. Within one on the servers, rows
    // written since count as a write concurrent with the search; a fold of them into a segment
    // renews the view's listing, and this look-up with it (Segments::term_postings).
    std::optional<bool>* known = segments_.view_has_rows(user_id);
    if (!known) return true;
    if (!*known) {
        RowIndexStatements& q = statements();
        q.params.user_id = user_id;
        *known = fetch_one(q.any_rows());
    }
    return **known;
}

}  // namespace notesd::detail
