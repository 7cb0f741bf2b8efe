// The search roles of SociStore: argument checks every strategy shares, then the IndexStrategy
// (index_strategy.hpp) inside the error guard; and the read views of ReadScope.
#include <stdexcept>

#include "store/soci_store.hpp"
#include "base/util.hpp"

namespace notesd {

SearchCorpus SociStore::search_corpus(long long user_id) {
    return reading("search_corpus", [&] { return index_->search_corpus(user_id); });
}

std::vector<long long> SociStore::term_dfs(long long user_id,
                                           const std::vector<std::string>& terms) {
    return reading("term_dfs", [&] { return index_->term_dfs(user_id, terms); });
}

std::vector<std::pair<std::string, long long>> SociStore::prefix_terms(long long user_id,
                                                                       const std::string& prefix,
                                                                       int limit) {
    // Stored terms are whole UTF-8 code points, and so must a prefix be to match one.
    if (limit <= 0 || !valid_utf8(prefix)) return {};
    return reading("prefix_terms", [&] { return index_->prefix_terms(user_id, prefix, limit); });
}

std::vector<TermPosting> SociStore::term_postings(long long user_id, const std::string& term,
                                                  const SearchFilter& f, int limit,
                                                  bool with_positions) {
    if (limit <= 0 || !valid_utf8(term)) return {};
    return reading("term_postings", [&] {
        return index_->term_postings(user_id, term, f, limit, with_positions);
    });
}

std::vector<TermPosting> SociStore::postings_at(long long user_id, const std::string& term,
                                                const std::vector<PostingNote>& notes) {
    if (notes.empty() || !valid_utf8(term)) return {};
    if (notes.size() > kPostingsAtMax)
        throw std::invalid_argument("postings_at takes at most kPostingsAtMax notes");
    return reading("postings_at", [&] { return index_->postings_at(user_id, term, notes); });
}

std::vector<IndexedNote> SociStore::indexed_notes(long long user_id,
                                                  const std::vector<std::string>& ids) {
    return reading("indexed_notes", [&] { return index_->indexed_notes(user_id, ids); });
}

std::vector<SearchHit> SociStore::notes_by_ids(long long user_id,
                                               const std::vector<std::string>& ids,
                                               bool with_content) {
    return reading("notes_by_ids",
                   [&] { return index_->notes_by_ids(user_id, ids, with_content); });
}

void SociStore::save_snapshot(const SnapshotRecord& s) {
    guarded("save_snapshot", [&] { index_->save_snapshot(s); });
}

std::optional<SnapshotRecord> SociStore::find_snapshot(long long user_id, const std::string& id,
                                                       long long now_us) {
    return reading("find_snapshot", [&] { return index_->find_snapshot(user_id, id, now_us); });
}

int SociStore::purge_snapshots(long long now_us, int max_rows) {
    if (max_rows <= 0) return 0;
    return guarded("purge_snapshots", [&] { return index_->purge_snapshots(now_us, max_rows); });
}

void SociStore::begin_read() {
    if (segments_.in_view()) return;
    if (index_->has_read_views()) {
        guarded("begin_read", [&] { index_->begin_read_view(); });
        reading_ = true;
    }
    // The segments listed once per user: in SQLite's read transaction one snapshot; on the
    // servers the listing of the view's first read, which a read meeting a segment it lacks
    // renews (Segments::term_postings).
    segments_.begin_view(reading_);
}

void SociStore::end_read() noexcept {
    segments_.end_view();
    if (!reading_) return;
    reading_ = false;
    try {
        index_->end_read_view();
    } catch (...) {
        try {
            sql_ << "ROLLBACK";
        } catch (...) {
            lost_ = true;  // the next call reconnects rather than find a transaction open
        }
    }
}

}  // namespace notesd
