// The search roles of SociStore: argument checks every strategy shares, then the IndexStrategy
// (index_strategy.hpp) inside the error guard; and the read views of ReadScope.
#include <algorithm>
#include <set>
#include <stdexcept>

#include "store/index_rows.hpp"
#include "store/soci_store.hpp"
#include "base/util.hpp"

namespace notesd {

SearchCorpus SociStore::search_corpus(long long user_id) {
    return reading("search_corpus", [&] { return index_->search_corpus(user_id); });
}

// Pending entries (store/pending_notes.hpp) are merged into every term read. They are listed
// before the strategy reads: on the servers, without a snapshot, a fold committing in between
// then shows its notes on both sides (counted once) rather than on neither. Within a view the
// head of the user's first listing tells whether there are any (none, as after an import or
// once the merger has folded them: no statement of their own).
detail::PendingList SociStore::pending_of(long long user_id) {
    const detail::Segments::ViewHead* head = segments_.view_head(user_id);
    return head && !head->has_pending ? pending_.none_of_user(user_id) : pending_.of_user(user_id);
}

std::vector<long long> SociStore::term_dfs(long long user_id,
                                           const std::vector<std::string>& terms) {
    return reading("term_dfs", [&] {
        const detail::PendingList pending = pending_of(user_id);
        std::vector<long long> out = index_->term_dfs(user_id, terms);
        if (!pending.empty())
            for (std::size_t i = 0; i < terms.size(); ++i)
                out[i] += detail::pending_df_change(pending, terms[i]);
        return out;
    });
}

std::vector<std::pair<std::string, long long>> SociStore::prefix_terms(long long user_id,
                                                                       const std::string& prefix,
                                                                       int limit) {
    // Stored terms are whole UTF-8 code points, and so must a prefix be to match one.
    if (limit <= 0 || !valid_utf8(prefix)) return {};
    return reading("prefix_terms", [&] {
        const detail::PendingList pending = pending_of(user_id);
        if (pending.empty()) return index_->prefix_terms(user_id, prefix, limit);
        // Each pending entry moves a term's df by one at most, and only a pending note's own
        // term can rise: the stored terms past the strategy's cut are exactly left out once the
        // result's last df is above the cut's (else the cut is widened).
        const std::vector<std::string> added = detail::pending_prefix_terms(pending, prefix);
        for (long long want = limit + 2 * static_cast<long long>(pending.size());; want *= 2) {
            const int cut = static_cast<int>(std::min<long long>(want, 1 << 30));
            const std::vector<std::pair<std::string, long long>> stored =
                index_->prefix_terms(user_id, prefix, cut);
            std::map<std::string, long long> df(stored.begin(), stored.end());
            std::vector<std::string> unseen;
            for (const std::string& t : added)
                if (!df.count(t)) unseen.push_back(t);
            const std::vector<long long> unseen_df =
                unseen.empty() ? std::vector<long long>() : index_->term_dfs(user_id, unseen);
            for (std::size_t i = 0; i < unseen.size(); ++i) df[unseen[i]] = unseen_df[i];
            std::vector<std::pair<std::string, long long>> out;
            for (auto& [t, d] : df) {
                const long long adjusted = d + detail::pending_df_change(pending, t);
                if (adjusted > 0) out.emplace_back(t, adjusted);
            }
            std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
                return a.second != b.second ? a.second > b.second : a.first < b.first;
            });
            const bool complete = static_cast<long long>(stored.size()) < cut || cut == (1 << 30);
            if (complete || (static_cast<int>(out.size()) >= limit &&
                             out[static_cast<std::size_t>(limit) - 1].second > stored.back().second)) {
                if (static_cast<int>(out.size()) > limit) out.resize(static_cast<std::size_t>(limit));
                return out;
            }
        }
    });
}

std::vector<TermPosting> SociStore::term_postings(long long user_id, const std::string& term,
                                                  const SearchFilter& f, int limit,
                                                  bool with_positions) {
    if (limit <= 0 || !valid_utf8(term)) return {};
    return reading("term_postings", [&] {
        const detail::PendingList pending = pending_of(user_id);
        std::vector<TermPosting> stored = index_->term_postings(user_id, term, f, limit, with_positions);
        if (pending.empty()) return stored;
        // A collection filter keeps the pending notes linked to one of the listed collections
        // (unknown and foreign ids are ignored, as the strategy ignores them).
        std::set<std::pair<long long, long long>> members;
        detail::NoteKeep keep;
        if (!f.collection_ids.empty()) {
            const std::vector<long long> colls = detail::listed_collections(
                user_id, f.collection_ids, [this](long long u, const std::string& id, long long* n) {
                    return collection_row_id(u, id, n);
                });
            if (colls.empty()) return stored;
            const std::map<long long, std::vector<long long>> links = pending_.collections_of(user_id);
            for (const auto& e : pending) {
                auto it = links.find(e->note_id);
                if (it == links.end()) continue;
                for (long long c : it->second)
                    if (std::find(colls.begin(), colls.end(), c) != colls.end())
                        members.emplace(e->note.uid_hi, e->note.uid_lo);
            }
            keep = [&](const SegmentNote& n) { return members.count({n.uid_hi, n.uid_lo}) > 0; };
        }
        std::vector<TermPosting> mine;
        detail::pending_term_postings(pending, term, f, keep, with_positions, mine);
        return detail::merge_rows_and_segments(std::move(mine), std::move(stored), limit);
    });
}

std::vector<TermPosting> SociStore::postings_at(long long user_id, const std::string& term,
                                                const std::vector<PostingNote>& notes) {
    if (notes.empty() || !valid_utf8(term)) return {};
    if (notes.size() > kPostingsAtMax)
        throw std::invalid_argument("postings_at takes at most kPostingsAtMax notes");
    return reading("postings_at", [&] {
        const detail::PendingList pending = pending_of(user_id);
        if (pending.empty()) return index_->postings_at(user_id, term, notes);
        // A pending note's postings are its entry's only (its older versions are dead).
        std::vector<TermPosting> out;
        std::vector<PostingNote> rest;
        for (const PostingNote& n : notes) {
            auto e = std::find_if(pending.begin(), pending.end(), [&](const auto& p) {
                return p->note.uid_hi == n.uid_hi && p->note.uid_lo == n.uid_lo;
            });
            if (e == pending.end()) {
                rest.push_back(n);
                continue;
            }
            if ((*e)->note.updated_us != n.updated_us) continue;
            detail::pending_term_postings({*e}, term, SearchFilter{}, nullptr, true, out);
        }
        if (!rest.empty())
            for (TermPosting& p : index_->postings_at(user_id, term, rest)) out.push_back(std::move(p));
        return out;
    });
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
    pending_.begin_view();
}

void SociStore::end_read() noexcept {
    segments_.end_view();
    pending_.end_view();
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
