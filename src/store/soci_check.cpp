// SociStore::check_user (notesctl check): the maintained counts against a recount, and the
// search index against a rebuild from the stored title and plain text, under the user's writer
// lock so that both sides describe one state; a strategy's read-optimised copy of the postings
// is compared with the rows by the strategy itself (IndexStrategy::check_packed_copy).
// Nothing is written.
#include <cstdint>
#include <map>
#include <unordered_map>

#include "index/note_index.hpp"
#include "index/postings_format.hpp"
#include "store/segments.hpp"
#include "store/plain_text_codec.hpp"
#include "store/soci_stmt.hpp"
#include "store/soci_store.hpp"
#include "store/time_counts.hpp"

namespace notesd {
namespace {

using detail::Prep;

// Order-independent digest of a multiset of rows: their count and the sum of their FNV-1a hashes.
struct RowSet {
    long long rows = 0;
    std::uint64_t sum = 0;
    void add(const std::string& row) {
        std::uint64_t h = 1469598103934665603ULL;
        for (unsigned char c : row) h = (h ^ c) * 1099511628211ULL;
        ++rows;
        sum += h;
    }
    bool operator!=(const RowSet& o) const { return rows != o.rows || sum != o.sum; }
};

// A posting as both sides describe it (a segment's postings have no note id: the rows' are
// checked against the notes apart).
std::string posting_row(long long updated, long long hi, long long lo, long long created,
                        long long flags, long long tfs, long long lens, const std::string& pos) {
    return std::to_string(updated) + '|' + std::to_string(hi) + '|' + std::to_string(lo) + '|' +
           std::to_string(created) + '|' + std::to_string(flags) + '|' + std::to_string(tfs) +
           '|' + std::to_string(lens) + '|' + pos;
}

// At most this many differences of one kind are listed; the rest are counted.
constexpr std::size_t kMaxListed = 20;

class Problems {
public:
    void add(const std::string& kind, const std::string& text) {
        if (++counts_[kind] <= kMaxListed) out_.push_back(text);
    }
    std::vector<std::string> take() {
        for (const auto& [kind, n] : counts_)
            if (n > kMaxListed)
                out_.push_back("... and " + std::to_string(n - kMaxListed) + " more " + kind);
        return std::move(out_);
    }

private:
    std::vector<std::string> out_;
    std::map<std::string, std::size_t> counts_;
};

std::string maintained_vs(long long recount, long long maintained) {
    return ": maintained " + std::to_string(maintained) + ", recount " + std::to_string(recount);
}

// What a rebuild from the stored terms gives: counts, token sums and postings by term.
struct Rebuilt {
    long long notes = 0, title_tokens = 0, body_tokens = 0;
    std::unordered_map<std::string, RowSet> postings;
};

// One user's check, in the caller's transaction.
class UserCheck {
public:
    UserCheck(soci::session& s, const Dialect& d, long long user_id) : sql_(s), d_(d), u_(user_id) {}

    // Pages through the user's notes by id, so memory stays bounded on a large database.
    Rebuilt rebuild() {
        Rebuilt r;
        long long last = 0, lim = 1000, id = 0, updated = 0, created = 0, flags = 0;
        std::string uuid, title, content, plain;
        soci::statement page =
            Prep(sql_, "SELECT n.id, n.uuid, n.updated_us, n.created_us, n.flags, n.title, "
                       "n.content, t.plain_text FROM notes n JOIN note_text t ON t.note_id = n.id "
                       "WHERE n.user_id = :u AND n.id > :last ORDER BY n.id" + d_.limit_clause())
                .out(id).out(uuid).out(updated).out(created).out(flags).out(title).out(content)
                .out(plain)
                .in(u_, "u").in(last, "last").in(lim, "lim").done();
        for (long long seen = lim; seen == lim;) {
            seen = 0;
            page.execute();
            while (page.fetch()) {
                ++seen;
                last = id;
                ++r.notes;
                const NoteTerms a = note_terms(title, detail::decode_plain_text(content, plain));
                r.title_tokens += a.title_len;
                r.body_tokens += a.body_len;
                long long hi = 0, lo = 0;
                detail::uuid_halves(uuid, hi, lo);
                for (const detail::TermCount& t : detail::count_terms(a.title_terms, a.body_terms))
                    r.postings[t.term].add(posting_row(updated, hi, lo, created, flags,
                                                       pack_pair(t.title_tf, t.body_tf),
                                                       pack_pair(a.title_len, a.body_len), t.pos));
            }
        }
        return r;
    }

    // users' counts and token sums; returns the maintained collection count.
    long long user_counts(const Rebuilt& r) {
        long long notes = 0, collections = 0, title_tokens = 0, body_tokens = 0;
        sql_ << "SELECT note_count, collection_count, title_tokens, body_tokens FROM users "
                "WHERE id = :u",
            soci::into(notes), soci::into(collections), soci::into(title_tokens),
            soci::into(body_tokens), soci::use(u_, "u");
        if (notes != r.notes) problems.add("counts", "users.note_count" + maintained_vs(r.notes, notes));
        if (title_tokens != r.title_tokens)
            problems.add("counts", "users.title_tokens" + maintained_vs(r.title_tokens, title_tokens));
        if (body_tokens != r.body_tokens)
            problems.add("counts", "users.body_tokens" + maintained_vs(r.body_tokens, body_tokens));
        return collections;
    }

    // The collection count, each note_count against its links, and the links' copies of the
    // notes' sort keys.
    void collections(long long maintained_count) {
        std::map<long long, std::pair<std::string, long long>> colls;  // id -> (uuid, count)
        long long cid = 0, count = 0;
        std::string cuuid;
        soci::statement st = Prep(sql_, "SELECT id, uuid, note_count FROM collections WHERE "
                                        "user_id = :u")
                                 .out(cid).out(cuuid).out(count).in(u_, "u").done();
        st.execute();
        while (st.fetch()) colls[cid] = {cuuid, count};
        const long long recount = static_cast<long long>(colls.size());
        if (maintained_count != recount)
            problems.add("counts", "users.collection_count" + maintained_vs(recount, maintained_count));
        std::map<long long, long long> links = link_counts(colls);
        for (const auto& [id, c] : colls)
            if (links[id] != c.second)
                problems.add("counts", "collections.note_count of " + c.first +
                                           maintained_vs(links[id], c.second));
    }

    // The postings (rows and the segments' live notes) and term_df against the rebuild, term
    // by term: a note in both, or in two segments, counts twice and differs.
    void postings(const Rebuilt& r, detail::Segments& segments, detail::PendingNotes& pending) {
        std::unordered_map<std::string, RowSet> actual;
        std::vector<std::string> broken;
        segments.each_posting(u_, [&](const std::string& t, const SegmentNote& n, const SegmentPosting& p) {
            actual[t].add(posting_row(n.updated_us, n.uid_hi, n.uid_lo, n.created_us, n.flags,
                                      pack_pair(p.title_tf, p.body_tf),
                                      pack_pair(n.title_len, n.body_len), std::string(p.pos)));
        }, broken);
        for (const std::string& b : broken) problems.add("segments", b);
        std::string term, pos;
        long long updated = 0, hi = 0, lo = 0, created = 0, flags = 0, tfs = 0, lens = 0;
        soci::statement st = Prep(sql_, "SELECT term, updated_us, uid_hi, uid_lo, "
                                        "created_us, flags, tfs, lens, pos FROM postings WHERE "
                                        "user_id = :u")
                                 .out(term).out(updated).out(hi).out(lo).out(created)
                                 .out(flags).out(tfs).out(lens).out(pos).in(u_, "u").done();
        st.execute();
        while (st.fetch())
            actual[term].add(posting_row(updated, hi, lo, created, flags, tfs, lens, pos));
        row_notes();
        const detail::PendingList entries = pending.of_user(u_);
        for (const auto& e : entries) {
            const SegmentNote& n = e->note;
            for (const SegmentTerm& t : e->terms)
                actual[t.term].add(posting_row(n.updated_us, n.uid_hi, n.uid_lo, n.created_us, n.flags,
                                               pack_pair(t.title_tf, t.body_tf),
                                               pack_pair(n.title_len, n.body_len), t.pos));
        }
        pending_notes(entries);
        for (const auto& [t, rows] : r.postings) {
            auto it = actual.find(t);
            const long long have = it == actual.end() ? 0 : it->second.rows;
            if (it == actual.end() || it->second != rows)
                problems.add("postings", "postings of term '" + t + "': " + std::to_string(have) +
                                             " rows, the rebuild has " + std::to_string(rows.rows) +
                                             (have == rows.rows ? " (with other content)" : ""));
        }
        for (const auto& [t, rows] : actual)
            if (!r.postings.count(t))
                problems.add("postings", "postings of term '" + t + "': " + std::to_string(rows.rows) +
                                             " rows of notes that do not hold it");
        term_df(r, entries);
    }

    // A note is either live or trashed.
    void trash() {
        std::string uuid;
        soci::statement st = Prep(sql_, "SELECT t.uuid FROM trashed_notes t JOIN notes n ON "
                                        "n.user_id = t.user_id AND n.uuid = t.uuid WHERE "
                                        "t.user_id = :u")
                                 .out(uuid).in(u_, "u").done();
        st.execute();
        while (st.fetch()) problems.add("trash", "note " + uuid + " is both live and trashed");
    }

    Problems problems;

private:
    // Each postings row names its note by id (collection filters join on it).
    void row_notes() {
        long long wrong = 0;
        sql_ << "SELECT " + d_.count_star() + " FROM postings p WHERE p.user_id = :u AND NOT "
                "EXISTS (SELECT 1 FROM notes n WHERE n.id = p.note_id AND n.user_id = p.user_id "
                "AND n.updated_us = p.updated_us)",
            soci::into(wrong), soci::use(u_, "u");
        if (wrong > 0)
            problems.add("postings", std::to_string(wrong) + " postings rows name no note of theirs");
    }

    std::map<long long, long long> link_counts(
        const std::map<long long, std::pair<std::string, long long>>& colls) {
        std::map<long long, long long> links;
        long long lc = 0, l_created = 0, l_updated = 0, l_flags = 0;
        long long n_created = 0, n_updated = 0, n_flags = 0;
        std::string l_uuid, n_uuid;
        soci::statement ls =
            Prep(sql_, "SELECT nc.collection_id, nc.note_uuid, nc.created_us, nc.updated_us, "
                       "nc.flags, n.uuid, n.created_us, n.updated_us, n.flags FROM "
                       "note_collections nc JOIN notes n ON n.id = nc.note_id WHERE n.user_id = :u")
                .out(lc).out(l_uuid).out(l_created).out(l_updated).out(l_flags).out(n_uuid)
                .out(n_created).out(n_updated).out(n_flags).in(u_, "u").done();
        ls.execute();
        while (ls.fetch()) {
            ++links[lc];
            if (!colls.count(lc))
                problems.add("links", "note " + n_uuid + " is linked to another user's collection");
            if (l_uuid != n_uuid || l_created != n_created || l_updated != n_updated ||
                l_flags != n_flags)
                problems.add("links", "the link of note " + n_uuid +
                                          " does not carry the note's current sort keys");
        }
        return links;
    }

    // Each pending entry with terms belongs to a note of the user at that version, and the
    // ones of gone notes (only `minus` left) to no live note.
    void pending_notes(const detail::PendingList& entries) {
        long long id = 0, updated = 0;
        std::string uuid;
        soci::statement st = Prep(sql_, "SELECT uuid, updated_us FROM notes WHERE id = :id AND "
                                        "user_id = :u")
                                 .out(uuid).out(updated).in(id, "id").in(u_, "u").done();
        for (const auto& e : entries) {
            if (e->note_id == 0) {
                if (!e->terms.empty()) problems.add("pending", "a pending entry of a gone note has terms");
                continue;
            }
            id = e->note_id;
            long long hi = 0, lo = 0;
            if (detail::fetch_one(st)) detail::uuid_halves(uuid, hi, lo);
            if (hi != e->note.uid_hi || lo != e->note.uid_lo || updated != e->note.updated_us)
                problems.add("pending", "pending entry " + std::to_string(e->id) +
                                            " does not name its note's current version");
        }
    }
    void term_df(const Rebuilt& r, const detail::PendingList& entries) {
        std::string term;
        long long df = 0;
        std::map<std::string, long long> dfs;
        soci::statement ds = Prep(sql_, "SELECT term, df FROM term_df WHERE user_id = :u")
                                 .out(term).out(df).in(u_, "u").done();
        ds.execute();
        while (ds.fetch()) dfs[term] = df;
        for (const auto& e : entries) {  // what a search counts: term_df moved by the entries
            for (const SegmentTerm& t : e->terms) ++dfs[t.term];
            for (const std::string& t : e->minus) --dfs[t];
        }
        for (auto it = dfs.begin(); it != dfs.end();) it = it->second == 0 ? dfs.erase(it) : std::next(it);
        for (const auto& [t, rows] : r.postings) {
            auto it = dfs.find(t);
            const long long got = it == dfs.end() ? 0 : it->second;
            if (got != rows.rows) problems.add("term_df", "term_df of '" + t + "'" + maintained_vs(rows.rows, got));
        }
        for (const auto& [t, got] : dfs)
            if (!r.postings.count(t)) problems.add("term_df", "term_df of '" + t + "'" + maintained_vs(0, got));
    }

    soci::session& sql_;
    const Dialect& d_;
    long long u_;
};

}  // namespace

std::vector<std::string> SociStore::check_user(long long user_id) {
    // In a write transaction for the user's lock (and one state); it writes nothing.
    return locked_write("check_user", user_id, [&] {
        UserCheck check(sql_, *dialect_, user_id);
        const Rebuilt rebuilt = check.rebuild();
        check.collections(check.user_counts(rebuilt));
        check.postings(rebuilt, segments_, pending_);
        for (const std::string& p : index_->check_packed_copy(user_id)) check.problems.add("packed", p);
        check.trash();
        for (const std::string& p : time_counts().check(user_id)) check.problems.add("time counts", p);
        return check.problems.take();
    });
}

}  // namespace notesd
