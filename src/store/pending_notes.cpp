#include "store/pending_notes.hpp"

#include <algorithm>
#include <stdexcept>

#include "index/pending_terms.hpp"
#include "index/search_index.hpp"
#include "store/soci_stmt.hpp"

namespace notesd::detail {

// The statements with the variables they bind (SOCI binds addresses: this never moves).
struct PendingNotes::Statements {
    Statements(soci::session& s, const Dialect& d);
    long long user_id = 0, id = 0, uid_hi = 0, uid_lo = 0, note_id = 0, updated_us = 0;
    long long created_us = 0, flags = 0, title_len = 0, body_len = 0, count = 0, collection_id = 0;
    std::string terms, minus;  // blobs in the dialect's form
    soci::statement ids, row, find, erase, insert, count_rows, links;
};

PendingNotes::Statements::Statements(soci::session& s, const Dialect& d)
    : ids(Prep(s, "SELECT id FROM index_pending WHERE user_id = :u").out(id).in(user_id, "u").done()),
      row(Prep(s, "SELECT uid_hi, uid_lo, note_id, updated_us, created_us, flags, title_len, "
                  "body_len, terms, minus FROM index_pending WHERE id = :id")
              .out(uid_hi).out(uid_lo).out(note_id).out(updated_us).out(created_us).out(flags)
              .out(title_len).out(body_len).out(terms).out(minus).in(id, "id").done()),
      find(Prep(s, "SELECT id, minus FROM index_pending WHERE user_id = :u AND uid_hi = :h AND "
                   "uid_lo = :l")
               .out(id).out(minus).in(user_id, "u").in(uid_hi, "h").in(uid_lo, "l").done()),
      erase(Prep(s, "DELETE FROM index_pending WHERE id = :id").in(id, "id").done()),
      insert(Prep(s, "INSERT INTO index_pending (user_id, uid_hi, uid_lo, note_id, updated_us, "
                     "created_us, flags, title_len, body_len, terms, minus) VALUES (:u, :h, :l, "
                     ":n, :up, :cr, :f, :tl, :bl, " + d.blob_value(":terms") + ", " +
                     d.blob_value(":minus") + ")")
                 .in(user_id, "u").in(uid_hi, "h").in(uid_lo, "l").in(note_id, "n")
                 .in(updated_us, "up").in(created_us, "cr").in(flags, "f").in(title_len, "tl")
                 .in(body_len, "bl").in(terms, "terms").in(minus, "minus").done()),
      count_rows(Prep(s, "SELECT " + d.count_star() + " FROM index_pending WHERE user_id = :u")
                     .out(count).in(user_id, "u").done()),
      links(Prep(s, "SELECT nc.note_id, nc.collection_id FROM index_pending p JOIN "
                    "note_collections nc ON nc.note_id = p.note_id WHERE p.user_id = :u")
                .out(note_id).out(collection_id).in(user_id, "u").done()) {}

PendingNotes::PendingNotes(soci::session& s, const Dialect& d) : session_(s), dialect_(d) {}
PendingNotes::~PendingNotes() = default;

void PendingNotes::drop_statements() { st_.reset(); }

PendingNotes::Statements& PendingNotes::st() {
    if (!st_) st_ = std::make_unique<Statements>(session_, dialect_);
    return *st_;
}

std::vector<long long> PendingNotes::ids_of(long long user_id) {
    Statements& q = st();
    q.user_id = user_id;
    std::vector<long long> out;
    q.ids.execute();
    while (q.ids.fetch()) out.push_back(q.id);
    end_read(q.ids);
    std::sort(out.begin(), out.end());
    return out;
}

std::optional<PendingEntry> PendingNotes::read_row(long long id) {
    Statements& q = st();
    q.id = id;
    if (!fetch_one(q.row)) return std::nullopt;
    PendingEntry e;
    e.id = id;
    e.note_id = q.note_id;
    e.note = SegmentNote{q.updated_us, q.uid_hi, q.uid_lo, q.created_us, q.flags, q.title_len, q.body_len};
    if (!dialect_.blob_result(q.terms) || !decode_pending_terms(q.terms, e.terms) ||
        !dialect_.blob_result(q.minus) || !decode_term_names(q.minus, e.minus))
        throw std::runtime_error("pending index entry " + std::to_string(id) + " is malformed");
    return e;
}

PendingList PendingNotes::of_user(long long user_id) {
    if (in_view_) {
        auto it = view_.find(user_id);
        if (it != view_.end()) return it->second;
    }
    const std::vector<long long> ids = ids_of(user_id);
    std::map<long long, std::shared_ptr<const PendingEntry>>& cached = cache_[user_id];
    std::map<long long, std::shared_ptr<const PendingEntry>> kept;
    PendingList out;
    out.reserve(ids.size());
    for (long long id : ids) {
        auto it = cached.find(id);
        std::shared_ptr<const PendingEntry> e = it != cached.end() ? it->second : nullptr;
        if (!e) {
            // Outside a snapshot (the servers) a write or a fold may have replaced the row
            // since the listing: left out, as a read a moment later would not see it either.
            std::optional<PendingEntry> row = read_row(id);
            if (!row) continue;
            e = std::make_shared<const PendingEntry>(std::move(*row));
        }
        kept.emplace(id, e);
        out.push_back(std::move(e));
    }
    cached.swap(kept);  // entries folded since leave the cache
    if (cached.empty()) cache_.erase(user_id);
    if (in_view_) view_[user_id] = out;
    return out;
}

PendingList PendingNotes::none_of_user(long long user_id) {
    cache_.erase(user_id);  // as of_user drops the entries folded since
    if (in_view_) view_[user_id] = {};
    return {};
}

std::map<long long, std::vector<long long>> PendingNotes::collections_of(long long user_id) {
    Statements& q = st();
    q.user_id = user_id;
    std::map<long long, std::vector<long long>> out;
    q.links.execute();
    while (q.links.fetch()) out[q.note_id].push_back(q.collection_id);
    end_read(q.links);
    return out;
}

std::optional<PendingNotes::Stored> PendingNotes::find(long long user_id, long long uid_hi,
                                                       long long uid_lo) {
    Statements& q = st();
    q.user_id = user_id;
    q.uid_hi = uid_hi;
    q.uid_lo = uid_lo;
    if (!fetch_one(q.find)) return std::nullopt;
    Stored s;
    s.id = q.id;
    if (!dialect_.blob_result(q.minus) || !decode_term_names(q.minus, s.minus))
        throw std::runtime_error("pending index entry " + std::to_string(q.id) + " is malformed");
    return s;
}

void PendingNotes::erase(long long id) {
    Statements& q = st();
    q.id = id;
    exec(q.erase);
}

// The ids are numbers of our own, written into the statement: one statement per
// kIdsPerStatement rows instead of one per row (a round trip each on a server).
constexpr std::size_t kIdsPerStatement = 256;

// f(", "-joined ids) for each run of at most kIdsPerStatement of them.
template <class F>
void each_id_list(const std::vector<long long>& ids, F&& f) {
    for (std::size_t i = 0; i < ids.size(); i += kIdsPerStatement)
        f(join_ids(std::vector<long long>(ids.begin() + i,
                                          ids.begin() + std::min(ids.size(), i + kIdsPerStatement))));
}

std::vector<long long> PendingNotes::still_pending(long long user_id, std::vector<long long> ids) {
    std::sort(ids.begin(), ids.end());
    std::vector<long long> out;
    long long id = 0;
    each_id_list(ids, [&](const std::string& list) {
        soci::statement q = (session_.prepare << "SELECT id FROM index_pending WHERE user_id = :u "
                                                 "AND id IN (" + list + ") ORDER BY id",
                             soci::into(id), soci::use(user_id, "u"));
        q.execute();
        while (q.fetch()) out.push_back(id);
    });
    return out;
}

void PendingNotes::erase(long long user_id, const std::vector<long long>& ids) {
    each_id_list(ids, [&](const std::string& list) {
        session_ << "DELETE FROM index_pending WHERE user_id = :u AND id IN (" + list + ")",
            soci::use(user_id, "u");
    });
}

void PendingNotes::insert(long long user_id, const PendingEntry& e) {
    Statements& q = st();
    q.user_id = user_id;
    q.uid_hi = e.note.uid_hi;
    q.uid_lo = e.note.uid_lo;
    q.note_id = e.note_id;
    q.updated_us = e.note.updated_us;
    q.created_us = e.note.created_us;
    q.flags = e.note.flags;
    q.title_len = e.note.title_len;
    q.body_len = e.note.body_len;
    q.terms = dialect_.blob_param(encode_pending_terms(e.terms));
    q.minus = dialect_.blob_param(encode_term_names(e.minus));
    exec(q.insert);
}

long long PendingNotes::count(long long user_id) {
    Statements& q = st();
    q.user_id = user_id;
    return fetch_one(q.count_rows) ? q.count : 0;
}

std::vector<PendingEntry> PendingNotes::oldest(long long user_id, long long limit) {
    std::vector<long long> ids = ids_of(user_id);
    if (static_cast<long long>(ids.size()) > limit) ids.resize(static_cast<std::size_t>(limit));
    std::vector<PendingEntry> out;
    for (long long id : ids) {
        std::optional<PendingEntry> row = read_row(id);
        if (!row) throw std::runtime_error("pending index entry vanished under the user's lock");
        out.push_back(std::move(*row));
    }
    return out;
}

// ---- merging into reads ----

namespace {

// The first of the sorted terms not below `key`.
std::vector<SegmentTerm>::const_iterator first_from(const std::vector<SegmentTerm>& terms,
                                                    const std::string& key) {
    return std::lower_bound(terms.begin(), terms.end(), key,
                            [](const SegmentTerm& t, const std::string& s) { return t.term < s; });
}

bool has_term(const std::vector<SegmentTerm>& terms, const std::string& term, const SegmentTerm** at) {
    const auto it = first_from(terms, term);
    if (it == terms.end() || it->term != term) return false;
    if (at) *at = &*it;
    return true;
}

}  // namespace

long long pending_df_change(const PendingList& pending, const std::string& term) {
    long long d = 0;
    for (const auto& e : pending) {
        if (has_term(e->terms, term, nullptr)) ++d;
        if (std::binary_search(e->minus.begin(), e->minus.end(), term)) --d;
    }
    return d;
}

void pending_term_postings(const PendingList& pending, const std::string& term,
                           const SearchFilter& f, const NoteKeep& keep, bool with_positions,
                           std::vector<TermPosting>& out) {
    const std::size_t first = out.size();
    for (const auto& e : pending) {
        const SegmentTerm* t = nullptr;
        if (!has_term(e->terms, term, &t) || !passes_filter(e->note, f) || (keep && !keep(e->note)))
            continue;
        out.push_back(segment_posting(e->note, SegmentPosting{0, t->title_tf, t->body_tf, t->pos},
                                      with_positions));
    }
    std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(), candidate_before);
}

std::vector<std::string> pending_prefix_terms(const PendingList& pending, const std::string& prefix) {
    std::set<std::string> out;
    for (const auto& e : pending) {
        for (auto it = first_from(e->terms, prefix); it != e->terms.end() && it->term.compare(0, prefix.size(), prefix) == 0; ++it)
            out.insert(it->term);
    }
    return {out.begin(), out.end()};
}

}  // namespace notesd::detail
