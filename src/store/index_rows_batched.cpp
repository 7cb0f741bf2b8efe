// RowIndex's reads that the server backends would otherwise pay a round trip each for: a
// query's document frequencies in one statement, and, within a read view, whether the user has
// postings rows at all looked up once. After an import every note is in a segment, and a
// search's terms (up to one per prefix expansion) then skip a postings statement each.
#include "store/index_rows.hpp"

#include <algorithm>

#include "base/util.hpp"

namespace notesd::detail {

soci::statement& RowIndexStatements::term_dfs() {
    return prepared(term_dfs_, [&] {
        std::string sql = "SELECT term, df FROM term_df WHERE user_id = :u AND term IN (";
        for (std::size_t i = 0; i < kDfBatch; ++i) sql += (i ? ", :d" : ":d") + std::to_string(i);
        Prep q(session, sql + ")");
        q.out(term_row).out(df).in(params.user_id, "u");
        for (std::size_t i = 0; i < kDfBatch; ++i) q.in(params.df_terms[i], ("d" + std::to_string(i)).c_str());
        return q.done();
    });
}

std::vector<long long> RowIndex::term_dfs(long long user_id, const std::vector<std::string>& terms) {
    RowIndexStatements& q = statements();
    q.params.user_id = user_id;
    std::vector<long long> out(terms.size(), 0);
    std::vector<std::string> asked;  // the valid terms, kDfBatch a statement (padded)
    for (const std::string& t : terms) if (valid_utf8(t)) asked.push_back(t);
    for (std::size_t from = 0; from < asked.size(); from += kDfBatch) {
        for (std::size_t k = 0; k < kDfBatch; ++k) q.params.df_terms[k] = asked[std::min(from + k, asked.size() - 1)];
        soci::statement& st = q.term_dfs();
        st.execute();
        while (st.fetch())
            for (std::size_t i = 0; i < terms.size(); ++i) if (terms[i] == q.term_row) out[i] = q.df;
        end_read(st);
    }
    return out;
}

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
    segments_.view_head(user_id);  // the view's first listing, which looks
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
