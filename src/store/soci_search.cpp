// The search side of SociStore (contract section 5, design section 5): per-user statistics,
// candidate postings in the order ranking breaks ties with, stored index fields, result items
// and snapshots. The database only finds and filters; ranking happens in rank.cpp.
#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include "store/soci_stmt.hpp"
#include "base/util.hpp"

namespace notesd {

using detail::fetch_one;
using detail::Prep;
using detail::SearchStmts;

namespace {

constexpr int kMaxCollectionFilter = 100;  // SearchParams::colls, the contract's limit

// Appends code point c to out as UTF-8.
void put_utf8(std::string& out, char32_t c) {
    if (c < 0x80) {
        out += static_cast<char>(c);
    } else if (c < 0x800) {
        out += static_cast<char>(0xC0 | (c >> 6));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        out += static_cast<char>(0xE0 | (c >> 12));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (c >> 18));
        out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    }
}

// Code points of valid UTF-8 text.
std::vector<char32_t> code_points(const std::string& s) {
    std::vector<char32_t> out;
    for (std::size_t i = 0; i < s.size();) {
        const unsigned char b = static_cast<unsigned char>(s[i]);
        const int n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
        char32_t c = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
        for (int k = 1; k < n; ++k) c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
        out.push_back(c);
        i += static_cast<std::size_t>(n);
    }
    return out;
}

// The least valid UTF-8 string above every string starting with `prefix` (valid UTF-8): the
// last code point incremented, trailing U+10FFFF carried. UTF-8 byte order is code point
// order, so [prefix, end) is exactly the bytewise prefix range, and `end` stays valid UTF-8
// (PostgreSQL rejects invalid text parameters). False when there is no upper bound.
bool prefix_end(const std::string& prefix, std::string& end) {
    std::vector<char32_t> cps = code_points(prefix);
    while (!cps.empty() && cps.back() == 0x10FFFF) cps.pop_back();
    if (cps.empty()) return false;
    char32_t& last = cps.back();
    last = last == 0xD7FF ? 0xE000 : last + 1;  // surrogates are not characters
    end.clear();
    for (char32_t c : cps) put_utf8(end, c);
    return true;
}

void set_filter(detail::SearchParams& p, const SearchFilter& f) {
    p.cmin = f.created.min_us;
    p.cmax = f.created.max_us;
    p.umin = f.updated.min_us;
    p.umax = f.updated.max_us;
    p.mask = p.mask2 = f.flags_any;
}

bool before(const TermPosting& a, const TermPosting& b) {
    if (a.updated_us != b.updated_us) return a.updated_us > b.updated_us;
    return a.uid_hi != b.uid_hi ? a.uid_hi > b.uid_hi : a.uid_lo > b.uid_lo;
}

bool same_note(const TermPosting& a, const TermPosting& b) {
    return a.uid_hi == b.uid_hi && a.uid_lo == b.uid_lo;
}

std::string join_ids(const std::vector<std::string>& ids) {
    std::string out;
    for (const std::string& id : ids) {
        const std::optional<std::string> c = parse_uuid(id);
        if (!c) throw std::invalid_argument("snapshot note id is not a uuid");
        if (!out.empty()) out += ' ';
        out += *c;
    }
    return out;
}

std::vector<std::string> split_words(const std::string& s) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < s.size()) {
        std::size_t e = s.find(' ', i);
        if (e == std::string::npos) e = s.size();
        if (e > i) out.push_back(s.substr(i, e - i));
        i = e + 1;
    }
    return out;
}

const char kFilters[] = " AND p.updated_us >= :umin AND p.updated_us <= :umax AND "
                        "p.created_us >= :cmin AND p.created_us <= :cmax AND "
                        "(:mask = 0 OR (p.flags & :mask2) <> 0)";

}  // namespace

// ---- statements ----

namespace detail {

soci::statement& SearchStmts::corpus() {
    return lazy(1, [&] {
        return Prep(s, "SELECT note_count, title_tokens, body_tokens FROM users WHERE id = :u")
            .out(o_notes).out(o_tt).out(o_bt).in(p.u, "u").done();
    });
}

soci::statement& SearchStmts::df() {
    return lazy(2, [&] {
        return Prep(s, "SELECT df FROM term_df WHERE user_id = :u AND term = :t")
            .out(o_df).in(p.u, "u").in(p.term, "t").done();
    });
}

soci::statement& SearchStmts::prefix(bool bounded) {
    return lazy(bounded ? 3 : 4, [&] {
        return Prep(s, std::string("SELECT term, df FROM term_df WHERE user_id = :u AND "
                                   "term >= :p") +
                           (bounded ? " AND term < :pe" : "") +
                           " ORDER BY df DESC, term ASC" + d.limit_clause())
            .out(o_term).out(o_df).in(p.u, "u").in(p.prefix, "p").in(p.prefix_end, "pe")
            .in(p.lim, "lim").done();
    });
}

// Postings drive: the key range (user, term, updated) read backwards is already in candidate
// order, so LIMIT stops the scan. With collections, each row is checked in note_collections'
// primary key (note_id, collection_id). One collection drives: its (collection, updated, uuid)
// index is read in the same order and each note probed in the postings key by updated_us.
std::string postings_sql(const Dialect& d, int collections, bool by_collection, bool filtered) {
    if (by_collection)
        return "SELECT p.uid_hi, p.uid_lo, p.updated_us, p.tfs, p.lens, p.pos FROM "
               "note_collections nc " + d.ordered_join() + " postings p ON p.user_id = :u AND "
               "p.term = :t AND p.updated_us = nc.updated_us AND p.note_id = nc.note_id WHERE "
               "nc.collection_id = :coll AND nc.updated_us >= :umin AND nc.updated_us <= :umax AND "
               "nc.created_us >= :cmin AND nc.created_us <= :cmax AND (:mask = 0 OR (nc.flags & "
               ":mask2) <> 0) ORDER BY nc.updated_us DESC, nc.note_uuid DESC" + d.limit_clause();
    std::string sql = std::string("SELECT p.uid_hi, p.uid_lo, p.updated_us, p.tfs, p.lens, p.pos "
                                  "FROM postings p WHERE p.user_id = :u AND p.term = :t") +
                      (filtered || collections > 0 ? kFilters : "");
    if (collections == 1) {
        sql += " AND EXISTS (SELECT 1 FROM note_collections nc WHERE nc.note_id = p.note_id AND "
               "nc.collection_id = :c0)";
    } else if (collections > 1) {
        sql += " AND EXISTS (SELECT 1 FROM note_collections nc WHERE nc.note_id = p.note_id AND "
               "nc.collection_id IN (";
        for (int i = 0; i < kMaxCollectionFilter; ++i) sql += (i ? ", :c" : ":c") + std::to_string(i);
        sql += "))";
    }
    return sql + " ORDER BY p.updated_us DESC, p.uid_hi DESC, p.uid_lo DESC" + d.limit_clause();
}

// The listed notes' rows, looked up by (time, high half) in the primary key; the caller drops
// rows of other notes (same time and high half) and repeats (padding repeats a listed note).
// MariaDB seeks each pair of a row-value IN list (two IN lists would seek every time with
// every half: 1,024 ranges for 32 notes); PostgreSQL seeks each pair of a VALUES list in a
// lateral subquery (Dialect::joins_key_lists). SQLite does not run this statement: it seeks
// each whole key with kPostingOfSql.
std::string postings_at_sql(const Dialect& d, std::size_t notes) {
    const std::string cols = "SELECT p.uid_hi, p.uid_lo, p.updated_us, p.tfs, p.lens, p.pos FROM ";
    std::string pairs;
    for (std::size_t i = 0; i < notes; ++i) {
        const std::string n = std::to_string(i);
        pairs += i ? ", (:a" + n + ", :h" + n + ")"
                   : d.joins_key_lists() ? "(CAST(:a0 AS BIGINT), CAST(:h0 AS BIGINT))" : "(:a0, :h0)";
    }
    if (d.joins_key_lists())
        // LATERAL with OFFSET 0 keeps the seek per key even in a generic plan, which would
        // otherwise hash-join the keys against the term's whole range
        return cols + "(VALUES " + pairs + ") AS k (us, hi) CROSS JOIN LATERAL (" + cols +
               "postings p WHERE p.user_id = :u AND p.term = :t AND p.updated_us = k.us AND "
               "p.uid_hi = k.hi OFFSET 0) p";
    return cols + "postings p WHERE p.user_id = :u AND p.term = :t AND (p.updated_us, p.uid_hi) IN (" +
           pairs + ")";
}

// One note's row by its whole key (SQLite: a statement run per note costs a seek, no more).
constexpr const char* kPostingOfSql =
    "SELECT p.uid_hi, p.uid_lo, p.updated_us, p.tfs, p.lens, p.pos FROM postings p WHERE "
    "p.user_id = ?1 AND p.term = ?2 AND p.updated_us = ?3 AND p.uid_hi = ?4 AND p.uid_lo = ?5";

namespace {

// The result columns of the postings statements, bound to the batch vectors (read_postings
// sizes them: SOCI takes a bulk into's size as its batch size).
void bind_posting_batch(Prep& q, SearchStmts& st) {
    q.out(st.b_hi).out(st.b_lo).out(st.b_updated).out(st.b_tfs).out(st.b_lens).out(st.b_pos);
}

}  // namespace

void SearchStmts::read_postings(soci::statement& st, std::vector<TermPosting>& out) {
    // SOCI shrinks the vectors to the rows of the last fetch (to 0 at the end), and both
    // execute and fetch refuse vectors of size 0
    auto full_batch = [&] {
        for (auto* v : {&b_hi, &b_lo, &b_updated, &b_tfs, &b_lens}) v->resize(kPostingsBatch);
        b_pos.resize(kPostingsBatch);
    };
    full_batch();
    st.execute();
    for (;;) {
        full_batch();
        if (!st.fetch()) break;
        for (std::size_t i = 0; i < b_hi.size(); ++i)
            out.push_back(unpack_posting(b_hi[i], b_lo[i], b_updated[i], b_tfs[i], b_lens[i],
                                         std::move(b_pos[i])));
    }
}

soci::statement& SearchStmts::postings(int collections, bool by_collection, bool filtered) {
    const int key = by_collection ? 10 : !filtered && collections == 0 ? 18 : 5 + std::min(collections, 2);
    return lazy(key, [&] {
        Prep q(s, postings_sql(d, collections, by_collection, filtered));
        bind_posting_batch(q, *this);
        q.in(p.u, "u").in(p.term, "t").in(p.coll, "coll").in(p.umin, "umin").in(p.umax, "umax")
            .in(p.cmin, "cmin").in(p.cmax, "cmax").in(p.mask, "mask").in(p.mask2, "mask2")
            .in(p.lim, "lim");
        std::vector<std::string> names(kMaxCollectionFilter);
        for (int i = 0; i < kMaxCollectionFilter; ++i) {
            names[i] = "c" + std::to_string(i);
            q.in(p.colls[static_cast<std::size_t>(i)], names[i].c_str());
        }
        return q.done();
    });
}

soci::statement& SearchStmts::postings_at() {
    return lazy(17, [&] {
        Prep q(s, postings_at_sql(d, p.at.size()));
        bind_posting_batch(q, *this);
        q.in(p.u, "u").in(p.term, "t");
        std::vector<std::string> names(2 * p.at.size());
        for (std::size_t i = 0; i < p.at.size(); ++i) {
            names[2 * i] = "a" + std::to_string(i);
            names[2 * i + 1] = "h" + std::to_string(i);
            q.in(p.at[i], names[2 * i].c_str()).in(p.at_hi[i], names[2 * i + 1].c_str());
        }
        return q.done();
    });
}

void SearchStmts::sqlite_postings_at(const std::vector<PostingNote>& notes,
                                     std::vector<TermPosting>& out) {
    SqliteStmt& st = prepared_once(s, scan_at, kPostingOfSql);
    st.bind(1, p.u).bind(2, p.term);  // bindings outlive each run: only the key changes
    for (const PostingNote& n : notes) {
        st.bind(3, n.updated_us).bind(4, n.uid_hi).bind(5, n.uid_lo);
        while (st.step())
            out.push_back(unpack_posting(st.i64(0), st.i64(1), st.i64(2), st.i64(3), st.i64(4),
                                         std::string(st.text(5))));
    }
}

namespace {

// " IN (:i0, ..., :i99)" over p.uuids: a chunk of note ids read in one statement (any order),
// one round trip on the server backends, one prepared execution on SQLite.
std::string uuid_list_sql() {
    std::string sql = " IN (";
    for (std::size_t i = 0; i < kHitsMax; ++i) sql += (i ? ", :i" : ":i") + std::to_string(i);
    return sql + ")";
}

void bind_uuid_list(Prep& q, SearchParams& p, std::vector<std::string>& names) {
    names.resize(kHitsMax);
    for (std::size_t i = 0; i < kHitsMax; ++i) {
        names[i] = "i" + std::to_string(i);
        q.in(p.uuids[i], names[i].c_str());
    }
}

}  // namespace

// One note by id. (An IN list here would let SQLite, without statistics, prefer scanning the
// user's range of the covering notes_by_created index over seeking each id: 80x slower.)
// SQLite numbers named parameters in order of appearance, so sqlite_indexed binds :u as 1.
namespace {

constexpr const char* kIndexedSql =
    "SELECT n.uuid, n.updated_us, t.title_terms, t.body_terms FROM notes n JOIN note_text t ON "
    "t.note_id = n.id WHERE n.user_id = :u AND n.uuid = :uuid";

// The columns of a search hit (hit(), sqlite_hit()): list_notes' columns plus plain_text,
// ending where the uuid condition follows.
std::string hit_sql(bool with_content) {
    return std::string("SELECT n.uuid, n.title, n.snippet, ") + (with_content ? "n.content, " : "") +
           "n.created_us, n.updated_us, n.collection_uuids, n.audio_uuids, t.plain_text FROM notes "
           "n JOIN note_text t ON t.note_id = n.id WHERE n.user_id = :u AND n.uuid";
}

}  // namespace

soci::statement& SearchStmts::indexed() {
    return lazy(11, [&] {
        return Prep(s, kIndexedSql)
            .out(o_uuid).out(o_updated).out(o_title_terms).out(o_body_terms).in(p.u, "u")
            .in(p.uuid, "uuid").done();
    });
}

// The columns and row mapping of list_notes (ReadStmts::note_list), plus plain_text, of a
// chunk of ids (p.uuids).
soci::statement& SearchStmts::hit(bool with_content) {
    return lazy(with_content ? 12 : 13, [&] {
        Prep q(s, hit_sql(with_content) + uuid_list_sql());
        q.out(nr.uuid).out(nr.title).out(nr.snippet);
        if (with_content) q.out(nr.content);
        q.out(nr.created).out(nr.updated).out(nr.colls).out(nr.audios).out(o_plain);
        q.in(p.u, "u");
        std::vector<std::string> names;
        bind_uuid_list(q, p, names);
        return q.done();
    });
}

SqliteStmt& SearchStmts::sqlite_indexed() {
    return prepared_once(s, indexed_one, kIndexedSql);
}

SqliteStmt& SearchStmts::sqlite_begin() {
    return prepared_once(s, begin_one, "BEGIN");
}

SqliteStmt& SearchStmts::sqlite_commit() {
    return prepared_once(s, commit_one, "COMMIT");
}

SqliteStmt& SearchStmts::sqlite_hit(bool with_content) {
    return prepared_once(s, hit_one[with_content ? 1 : 0],
                         [&] { return hit_sql(with_content) + " = :uuid"; });
}

SqliteStmt& SearchStmts::sqlite_snapshot_insert() {
    return prepared_once(
        s, snap_insert,
        "INSERT INTO snap.search_snapshots (id_hi, id, user_id, fingerprint, created_us, "
        "expires_us, note_ids) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
}

SqliteStmt& SearchStmts::sqlite_snapshot_find() {
    return prepared_once(s, snap_find,
                         "SELECT id, fingerprint, created_us, expires_us, note_ids FROM "
                         "snap.search_snapshots WHERE id_hi = ?1 AND user_id = ?2 AND expires_us > ?3");
}

// The oldest ?2 rows (creation order), those of them expired: rows of one lifetime expire in
// that order. After the lifetime was made shorter, rows made under the longer one hold the
// purge back until they expire themselves; they are never served after their own expiry.
SqliteStmt& SearchStmts::sqlite_snapshot_purge() {
    return prepared_once(s, snap_purge,
                         "DELETE FROM snap.search_snapshots WHERE seq IN (SELECT seq FROM "
                         "snap.search_snapshots ORDER BY seq LIMIT ?2) AND expires_us <= ?1");
}

soci::statement& SearchStmts::snapshot_insert() {
    return lazy(14, [&] {
        return Prep(s, "INSERT INTO snapshots (id, user_id, fingerprint, "
                       "created_us, expires_us, note_ids) VALUES (:id, :u, :fp, :created, "
                       ":expires, :ids)")
            .in(snap.id, "id").in(snap.user_id, "u").in(snap.fingerprint, "fp")
            .in(snap.created_us, "created").in(snap.expires_us, "expires").in(snap_ids, "ids")
            .done();
    });
}

soci::statement& SearchStmts::snapshot_find() {
    return lazy(15, [&] {
        return Prep(s, "SELECT fingerprint, created_us, expires_us, note_ids FROM snapshots "
                           "WHERE id = :id AND user_id = :u AND "
                           "expires_us > :now")
            .out(snap.fingerprint).out(snap.created_us).out(snap.expires_us).out(snap_ids)
            .in(p.uuid, "id").in(p.u, "u").in(p.now, "now").done();
    });
}

soci::statement& SearchStmts::snapshot_purge() {
    return lazy(16, [&] {
        return Prep(s, d.delete_expired_snapshots()).in(p.now, "now").in(p.lim, "lim").done();
    });
}

}  // namespace detail

// ---- the Store methods ----

SearchCorpus SociStore::search_corpus(long long user_id) {
    return guarded("search_corpus", [&] {
        SearchStmts& q = searches();
        q.p.u = user_id;
        SearchCorpus c;
        if (fetch_one(q.corpus())) c = SearchCorpus{q.o_notes, q.o_tt, q.o_bt};
        return c;
    });
}

std::vector<long long> SociStore::term_dfs(long long user_id,
                                           const std::vector<std::string>& terms) {
    return guarded("term_dfs", [&] {
        SearchStmts& q = searches();
        q.p.u = user_id;
        std::vector<long long> out;
        out.reserve(terms.size());
        for (const std::string& t : terms) {
            q.p.term = t;
            out.push_back(valid_utf8(t) && fetch_one(q.df()) ? q.o_df : 0);
        }
        return out;
    });
}

std::vector<std::pair<std::string, long long>> SociStore::prefix_terms(long long user_id,
                                                                       const std::string& prefix,
                                                                       int limit) {
    std::vector<std::pair<std::string, long long>> out;
    // Stored terms are whole UTF-8 code points, and so must a prefix be to match one.
    if (limit <= 0 || !valid_utf8(prefix)) return out;
    return guarded("prefix_terms", [&] {
        SearchStmts& q = searches();
        q.p.u = user_id;
        q.p.prefix = prefix;
        q.p.lim = limit;
        const bool bounded = prefix_end(prefix, q.p.prefix_end);
        soci::statement& st = q.prefix(bounded);
        st.execute();
        while (st.fetch()) out.emplace_back(q.o_term, q.o_df);
        return out;
    });
}

std::vector<TermPosting> SociStore::term_postings(long long user_id, const std::string& term,
                                                  const SearchFilter& f, int limit,
                                                  bool with_positions) {
    if (limit <= 0 || !valid_utf8(term)) return {};
    return guarded("term_postings", [&] {
        std::vector<TermPosting> out;
        // Unknown, foreign and malformed collection ids are ignored; none left: no notes.
        std::vector<long long> colls;
        long long coll_notes = 0;
        for (const std::string& id : f.collection_ids) {
            long long n = 0;
            const long long c = find_collection(user_id, id, &n);
            if (c == 0 || std::find(colls.begin(), colls.end(), c) != colls.end()) continue;
            colls.push_back(c);
            coll_notes += n;
            if (static_cast<int>(colls.size()) == kMaxCollectionFilter) break;
        }
        if (!f.collection_ids.empty() && colls.empty()) return out;
        SearchStmts& q = searches();
        q.p.u = user_id;
        q.p.term = term;
        q.p.lim = limit;
        set_filter(q.p, f);
        if (!colls.empty()) return postings_in_collections(colls, coll_notes, limit);
        // no bound and no flag: the scan skips the filter columns (most searches)
        const bool filtered =
            f.flags_any != 0 || !(f.created == TimeRange{}) || !(f.updated == TimeRange{});
        if (detail::PackedPostings* packed = q.packed()) {
            packed->read(user_id, term,
                         detail::PostingsWindow{f.updated.min_us, f.updated.max_us,
                                                f.created.min_us, f.created.max_us, f.flags_any},
                         limit, with_positions, out);
            return out;
        }
        q.read_postings(q.postings(0, false, filtered), out);
        return out;
    });
}

// Whichever side is smaller drives: the collections' notes (each probed in postings) when
// they are fewer than the term's notes, else the term's postings (each probed in the links).
// Both give the same rows in the same order; only the work differs.
std::vector<TermPosting> SociStore::postings_in_collections(const std::vector<long long>& colls,
                                                            long long coll_notes, int limit) {
    SearchStmts& q = searches();
    std::vector<TermPosting> out;
    const long long df = fetch_one(q.df()) ? q.o_df : 0;
    if (df == 0) return out;
    if (coll_notes >= df) {
        for (std::size_t i = 0; i < q.p.colls.size(); ++i)
            q.p.colls[i] = colls[i < colls.size() ? i : 0];  // padding repeats a listed id
        q.read_postings(q.postings(static_cast<int>(colls.size()), false), out);
        return out;
    }
    soci::statement& st = q.postings(1, true);
    for (long long c : colls) {
        q.p.coll = c;
        q.read_postings(st, out);
    }
    // Merge: a note in several listed collections comes once; the global order and limit hold.
    std::sort(out.begin(), out.end(), before);
    out.erase(std::unique(out.begin(), out.end(), same_note), out.end());
    if (out.size() > static_cast<std::size_t>(limit)) out.resize(static_cast<std::size_t>(limit));
    return out;
}

std::vector<TermPosting> SociStore::postings_at(long long user_id, const std::string& term,
                                                const std::vector<PostingNote>& notes) {
    if (notes.empty() || !valid_utf8(term)) return {};
    if (notes.size() > kPostingsAtMax)
        throw std::invalid_argument("postings_at takes at most kPostingsAtMax notes");
    return guarded("postings_at", [&] {
        SearchStmts& q = searches();
        q.p.u = user_id;
        q.p.term = term;
        std::vector<TermPosting> out;
        if (q.sqlite) {
            q.sqlite_postings_at(notes, out);
            return out;
        }
        for (std::size_t i = 0; i < q.p.at.size(); ++i) {
            const PostingNote& n = notes[i < notes.size() ? i : 0];  // padding repeats a listed note
            q.p.at[i] = n.updated_us;
            q.p.at_hi[i] = n.uid_hi;
        }
        std::vector<TermPosting> rows;
        q.read_postings(q.postings_at(), rows);
        for (TermPosting& row : rows) {
            auto same = [&](long long us, long long hi, long long lo) {
                return us == row.updated_us && hi == row.uid_hi && lo == row.uid_lo;
            };
            // notes updated in the same microsecond share a time: keep the listed ones, once
            const bool listed = std::any_of(notes.begin(), notes.end(), [&](const PostingNote& n) {
                return same(n.updated_us, n.uid_hi, n.uid_lo);
            });
            const bool repeated = std::any_of(out.begin(), out.end(), [&](const TermPosting& o) {
                return same(o.updated_us, o.uid_hi, o.uid_lo);
            });
            if (listed && !repeated) out.push_back(std::move(row));
        }
        return out;
    });
}

namespace {

// Binds ids[from, from + kHitsMax) that are uuids, canonical, to p.uuids (padded with the
// first) and records where each sits in `ids`; false when none of them is a uuid.
bool bind_uuid_chunk(detail::SearchParams& p, const std::vector<std::string>& ids, std::size_t from,
                     std::unordered_map<std::string, std::vector<std::size_t>>& places) {
    places.clear();
    std::size_t n = 0;
    for (std::size_t i = from; i < ids.size() && i < from + detail::kHitsMax; ++i)
        if (const std::optional<std::string> c = parse_uuid(ids[i])) {
            p.uuids[n++] = *c;
            places[*c].push_back(i);
        }
    for (std::size_t i = n; n > 0 && i < detail::kHitsMax; ++i) p.uuids[i] = p.uuids[0];
    return n > 0;
}

}  // namespace

std::vector<IndexedNote> SociStore::indexed_notes(long long user_id,
                                                  const std::vector<std::string>& ids) {
    return guarded("indexed_notes", [&] {
        SearchStmts& q = searches();
        q.p.u = user_id;
        std::vector<IndexedNote> out;
        out.reserve(ids.size());
        for (const std::string& id : ids) {
            const std::optional<std::string> c = parse_uuid(id);
            if (!c) continue;
            if (q.sqlite) {  // SQLite's own API: no per-row exchange through SOCI
                detail::SqliteStmt& st = q.sqlite_indexed();
                st.bind(1, user_id).bind(2, *c);
                if (!st.step()) continue;
                out.push_back(IndexedNote{std::string(st.text(0)), st.i64(1), std::string(st.text(2)),
                                          std::string(st.text(3))});
                st.reset();
                continue;
            }
            q.p.uuid = *c;
            if (fetch_one(q.indexed()))
                out.push_back(IndexedNote{q.o_uuid, q.o_updated, q.o_title_terms, q.o_body_terms});
        }
        return out;
    });
}

std::vector<SearchHit> SociStore::notes_by_ids(long long user_id,
                                               const std::vector<std::string>& ids,
                                               bool with_content) {
    return guarded("notes_by_ids", [&] {
        SearchStmts& q = searches();
        q.p.u = user_id;
        std::vector<SearchHit> out;
        out.reserve(ids.size());
        if (q.sqlite) {  // one seek per note, without SOCI's exchange or an IN list's temp index
            detail::SqliteStmt& st = q.sqlite_hit(with_content);
            detail::NoteRow& r = q.nr;
            for (const std::string& id : ids) {
                const std::optional<std::string> c = parse_uuid(id);
                if (!c) continue;
                st.bind(1, user_id).bind(2, *c);
                if (!st.step()) continue;
                int col = 0;
                r.uuid = st.text(col++);
                r.title = st.text(col++);
                r.snippet = st.text(col++);
                if (with_content) r.content = st.text(col++);
                r.created = st.i64(col++);
                r.updated = st.i64(col++);
                r.colls = st.text(col++);
                r.audios = st.text(col++);
                std::string plain(st.text(col));
                st.reset();
                out.push_back(SearchHit{detail::to_note(r, with_content), std::move(plain)});
            }
            return out;
        }
        std::unordered_map<std::string, std::vector<std::size_t>> places;  // a listed id may repeat
        for (std::size_t from = 0; from < ids.size(); from += detail::kHitsMax) {
            if (!bind_uuid_chunk(q.p, ids, from, places)) continue;
            std::vector<std::optional<SearchHit>> found(std::min(detail::kHitsMax, ids.size() - from));
            soci::statement& st = q.hit(with_content);
            st.execute();
            while (st.fetch()) {
                auto it = places.find(q.nr.uuid);
                if (it == places.end()) continue;
                for (std::size_t i : it->second)
                    found[i - from] = SearchHit{detail::to_note(q.nr, with_content), q.o_plain};
            }
            for (auto& f : found)
                if (f) out.push_back(std::move(*f));
        }
        return out;
    });
}

namespace {

// The index key of a snapshot id: its first 8 bytes as an integer.
long long high_half(std::string_view bytes16) {
    unsigned long long v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | static_cast<unsigned char>(bytes16[static_cast<std::size_t>(i)]);
    return static_cast<long long>(v);
}

}  // namespace

void SociStore::save_snapshot(const SnapshotRecord& s) {
    // SQLite: compact rows in the snapshots file (schema 007, dialect.cpp); the servers below.
    if (target_.backend == Backend::Sqlite) {
        std::string id, ids;
        if (!append_uuid_bytes(id, s.id)) throw std::invalid_argument("snapshot id is not a uuid");
        if (!valid_utf8(s.fingerprint)) throw std::invalid_argument("snapshot fingerprint is not UTF-8");
        ids.reserve(16 * s.note_ids.size());
        for (const std::string& n : s.note_ids)
            if (!append_uuid_bytes(ids, n)) throw std::invalid_argument("snapshot note id is not a uuid");
        guarded("save_snapshot", [&] {
            detail::SqliteStmt& st = searches().sqlite_snapshot_insert();
            st.bind(1, high_half(id)).bind_blob(2, id).bind(3, s.user_id).bind(4, s.fingerprint);
            st.bind(5, s.created_us).bind(6, s.expires_us).bind_blob(7, ids);
            st.run();
        });
        return;
    }
    const std::optional<std::string> id = parse_uuid(s.id);
    if (!id) throw std::invalid_argument("snapshot id is not a uuid");
    if (!valid_utf8(s.fingerprint)) throw std::invalid_argument("snapshot fingerprint is not UTF-8");
    const std::string ids = join_ids(s.note_ids);
    guarded("save_snapshot", [&] {
        SearchStmts& q = searches();
        q.snap = s;
        q.snap.id = *id;
        q.snap_ids = ids;
        detail::exec(q.snapshot_insert());
    });
}

void SociStore::begin_read() {
    if (target_.backend != Backend::Sqlite || reading_) return;
    guarded("begin_read", [&] { searches().sqlite_begin().run(); });  // deferred: locks at the first read
    reading_ = true;
}

void SociStore::end_read() noexcept {
    if (!reading_) return;
    reading_ = false;
    try {
        searches().sqlite_commit().run();
    } catch (...) {
        try {
            sql_ << "ROLLBACK";
        } catch (...) {
            lost_ = true;  // the next call reconnects rather than find a transaction open
        }
    }
}

std::optional<SnapshotRecord> SociStore::find_snapshot(long long user_id, const std::string& id,
                                                       long long now_us) {
    if (target_.backend == Backend::Sqlite) {
        std::string key;
        if (!append_uuid_bytes(key, id)) return std::nullopt;
        return guarded("find_snapshot", [&]() -> std::optional<SnapshotRecord> {
            detail::SqliteStmt& st = searches().sqlite_snapshot_find();
            st.bind(1, high_half(key)).bind(2, user_id).bind(3, now_us);
            std::optional<SnapshotRecord> out;
            while (st.step()) {
                if (out || st.blob(0) != key) continue;  // another id with the same high half
                SnapshotRecord r;
                r.id = uuid_from_bytes(key);
                r.user_id = user_id;
                r.fingerprint = std::string(st.text(1));
                r.created_us = st.i64(2);
                r.expires_us = st.i64(3);
                const std::string_view ids = st.blob(4);
                for (std::size_t i = 0; i + 16 <= ids.size(); i += 16) r.note_ids.push_back(uuid_from_bytes(ids.substr(i, 16)));
                out = std::move(r);
            }
            return out;
        });
    }
    const std::optional<std::string> c = parse_uuid(id);
    if (!c) return std::nullopt;
    return guarded("find_snapshot", [&]() -> std::optional<SnapshotRecord> {
        SearchStmts& q = searches();
        q.p.uuid = *c;
        q.p.u = user_id;
        q.p.now = now_us;
        if (!fetch_one(q.snapshot_find())) return std::nullopt;
        SnapshotRecord r = q.snap;
        r.id = *c;
        r.user_id = user_id;
        r.note_ids = split_words(q.snap_ids);
        return r;
    });
}

int SociStore::purge_snapshots(long long now_us, int max_rows) {
    if (max_rows <= 0) return 0;
    if (target_.backend == Backend::Sqlite) {
        return guarded("purge_snapshots", [&] {
            detail::SqliteStmt& st = searches().sqlite_snapshot_purge();
            st.bind(1, now_us).bind(2, static_cast<long long>(max_rows));
            st.run();
            return st.changes();
        });
    }
    return guarded("purge_snapshots", [&] {
        SearchStmts& q = searches();
        q.p.now = now_us;
        q.p.lim = max_rows;
        soci::statement& st = q.snapshot_purge();
        detail::exec(st);
        return static_cast<int>(st.get_affected_rows());
    });
}

}  // namespace notesd
