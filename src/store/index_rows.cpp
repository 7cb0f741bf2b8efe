// The row index (index_rows.hpp): statistics, candidate postings in the order ranking breaks
// ties with, stored index fields, result items and snapshots, as SQL through SOCI.
#include "store/index_rows.hpp"

#include <algorithm>
#include <iterator>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "index/note_index.hpp"
#include "index/postings_format.hpp"
#include "base/util.hpp"
#include "store/plain_text_codec.hpp"

namespace notesd::detail {
namespace {

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
    for (char32_t c : cps) append_utf8(end, c);
    return true;
}

void set_filter(SearchParams& p, const SearchFilter& f) {
    p.created_min = f.created.min_us;
    p.created_max = f.created.max_us;
    p.updated_min = f.updated.min_us;
    p.updated_max = f.updated.max_us;
    p.flags_any = p.flags_any_again = f.flags_any;
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

const char kFilters[] = " AND p.updated_us >= :umin AND p.updated_us <= :umax AND "
                        "p.created_us >= :cmin AND p.created_us <= :cmax AND "
                        "(:mask = 0 OR (p.flags & :mask2) <> 0)";

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
// every half); PostgreSQL seeks each pair of a VALUES list in a lateral subquery
// (Dialect::joins_key_lists).
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

// The result columns of the postings statements, bound to the batch vectors (read_postings
// sizes them: SOCI takes a bulk into's size as its batch size).
void bind_posting_batch(Prep& q, PostingBatch& b) {
    q.out(b.uid_hi).out(b.uid_lo).out(b.updated_us).out(b.tfs).out(b.lens).out(b.pos);
}

// " IN (:i0, ..., :i<length - 1>)" over note_uuids: a chunk of note ids read in one statement
// (any order), one round trip on the server backends.
std::string uuid_list_sql(std::size_t length) {
    std::string sql = " IN (";
    for (std::size_t i = 0; i < length; ++i) sql += (i ? ", :i" : ":i") + std::to_string(i);
    return sql + ")";
}

void bind_uuid_list(Prep& q, SearchParams& p, std::vector<std::string>& names, std::size_t length) {
    names.resize(length);
    for (std::size_t i = 0; i < length; ++i) {
        names[i] = "i" + std::to_string(i);
        q.in(p.note_uuids[i], names[i].c_str());
    }
}

}  // namespace

// One note by id. (An IN list here would let SQLite, without statistics, prefer scanning the
// user's range of the covering notes_by_created index over seeking each id.)
const char kIndexedNoteSql[] =
    "SELECT n.uuid, n.updated_us, n.title, n.content, t.plain_text FROM notes n JOIN note_text t "
    "ON t.note_id = n.id WHERE n.user_id = :u AND n.uuid = :uuid";

// The content comes with or without include_note_content: the stored plain text is its edits.
const char kHitColumnsSql[] =
    "SELECT n.uuid, n.title, n.snippet, n.created_us, n.updated_us, n.collection_uuids, "
    "n.audio_uuids, n.content, t.plain_text FROM notes n JOIN note_text t ON t.note_id = n.id "
    "WHERE n.user_id = :u AND n.uuid";

soci::statement& RowIndexStatements::corpus() {
    return prepared(corpus_, [&] {
        return Prep(session, "SELECT note_count, title_tokens, body_tokens FROM users WHERE id = :u")
            .out(corpus_row.notes).out(corpus_row.title_tokens).out(corpus_row.body_tokens)
            .in(params.user_id, "u").done();
    });
}

soci::statement& RowIndexStatements::term_df() {
    return prepared(term_df_, [&] {
        return Prep(session, "SELECT df FROM term_df WHERE user_id = :u AND term = :t")
            .out(df).in(params.user_id, "u").in(params.term, "t").done();
    });
}

soci::statement& RowIndexStatements::prefix_terms(bool bounded) {
    return prepared(bounded ? prefix_bounded_ : prefix_open_, [&] {
        return Prep(session, std::string("SELECT term, df FROM term_df WHERE user_id = :u AND "
                                         "term >= :p") +
                                 (bounded ? " AND term < :pe" : "") +
                                 " ORDER BY df DESC, term ASC" + dialect.limit_clause())
            .out(term_row).out(df).in(params.user_id, "u").in(params.prefix, "p")
            .in(params.prefix_end, "pe").in(params.limit, "lim").done();
    });
}

soci::statement& RowIndexStatements::postings(int collections, bool by_collection, bool filtered) {
    std::optional<soci::statement>& slot =
        by_collection                         ? postings_by_collection_
        : collections > 1                     ? postings_in_collections_
        : collections == 1                    ? postings_in_collection_
        : filtered                            ? postings_filtered_
                                              : postings_unfiltered_;
    return prepared(slot, [&] {
        Prep q(session, postings_sql(dialect, collections, by_collection, filtered));
        bind_posting_batch(q, batch);
        SearchParams& p = params;
        q.in(p.user_id, "u").in(p.term, "t").in(p.collection_id, "coll")
            .in(p.updated_min, "umin").in(p.updated_max, "umax").in(p.created_min, "cmin")
            .in(p.created_max, "cmax").in(p.flags_any, "mask").in(p.flags_any_again, "mask2")
            .in(p.limit, "lim");
        std::vector<std::string> names(kMaxCollectionFilter);
        for (int i = 0; i < kMaxCollectionFilter; ++i) {
            names[i] = "c" + std::to_string(i);
            q.in(p.collection_ids[static_cast<std::size_t>(i)], names[i].c_str());
        }
        return q.done();
    });
}

soci::statement& RowIndexStatements::postings_at() {
    return prepared(postings_at_, [&] {
        SearchParams& p = params;
        Prep q(session, postings_at_sql(dialect, p.at_updated.size()));
        bind_posting_batch(q, batch);
        q.in(p.user_id, "u").in(p.term, "t");
        std::vector<std::string> names(2 * p.at_updated.size());
        for (std::size_t i = 0; i < p.at_updated.size(); ++i) {
            names[2 * i] = "a" + std::to_string(i);
            names[2 * i + 1] = "h" + std::to_string(i);
            q.in(p.at_updated[i], names[2 * i].c_str()).in(p.at_uid_hi[i], names[2 * i + 1].c_str());
        }
        return q.done();
    });
}

soci::statement& RowIndexStatements::collection_notes() {
    return prepared(collection_notes_, [&] {
        return Prep(session, "SELECT note_uuid FROM note_collections WHERE collection_id = :coll")
            .out(params.note_uuid).in(params.collection_id, "coll").done();
    });
}

soci::statement& RowIndexStatements::indexed_note() {
    return prepared(indexed_note_, [&] {
        return Prep(session, kIndexedNoteSql)
            .out(indexed_row.id).out(indexed_row.updated_us).out(indexed_title)
            .out(indexed_content).out(indexed_plain_text).in(params.user_id, "u")
            .in(params.note_uuid, "uuid")
            .done();
    });
}

// The columns of list_notes (ReadStatements::note_list) with the content, plus the stored
// plain text, of a chunk of ids (note_uuids).
soci::statement& RowIndexStatements::hits(std::size_t length) {
    const std::size_t k = static_cast<std::size_t>(
        std::find(kHitsLengths.begin(), kHitsLengths.end(), length) - kHitsLengths.begin());
    if (k == kHitsLengths.size()) throw std::logic_error("hits: not one of kHitsLengths");
    return prepared(hits_[k], [&] {
        Prep q(session, kHitColumnsSql + uuid_list_sql(length));
        q.out(hit_row.uuid).out(hit_row.title).out(hit_row.snippet);
        q.out(hit_row.created_us).out(hit_row.updated_us).out(hit_row.collection_uuids)
            .out(hit_row.audio_uuids).out(hit_row.content)
            .out(hit_plain_text);
        q.in(params.user_id, "u");
        std::vector<std::string> names;
        bind_uuid_list(q, params, names, length);
        return q.done();
    });
}

soci::statement& RowIndexStatements::snapshot_insert() {
    return prepared(snapshot_insert_, [&] {
        SnapshotRecord& r = snapshot_row;
        return Prep(session, "INSERT INTO snapshots (id, user_id, fingerprint, "
                             "created_us, expires_us, note_ids) VALUES (:id, :u, :fp, :created, "
                             ":expires, :ids)")
            .in(r.id, "id").in(r.user_id, "u").in(r.fingerprint, "fp")
            .in(r.created_us, "created").in(r.expires_us, "expires").in(snapshot_note_ids, "ids")
            .done();
    });
}

soci::statement& RowIndexStatements::snapshot_find() {
    return prepared(snapshot_find_, [&] {
        SnapshotRecord& r = snapshot_row;
        return Prep(session, "SELECT fingerprint, created_us, expires_us, note_ids FROM snapshots "
                             "WHERE id = :id AND user_id = :u AND "
                             "expires_us > :now")
            .out(r.fingerprint).out(r.created_us).out(r.expires_us).out(snapshot_note_ids)
            .in(params.note_uuid, "id").in(params.user_id, "u").in(params.now_us, "now").done();
    });
}

soci::statement& RowIndexStatements::snapshot_purge() {
    return prepared(snapshot_purge_, [&] {
        return Prep(session, dialect.delete_expired_snapshots())
            .in(params.now_us, "now").in(params.limit, "lim").done();
    });
}

std::vector<long long> listed_collections(long long user_id, const std::vector<std::string>& ids,
                                         const CollectionLookup& find, long long* notes) {
    std::vector<long long> out;
    for (const std::string& id : ids) {
        long long n = 0;
        const long long c = find(user_id, id, &n);
        if (c == 0 || std::find(out.begin(), out.end(), c) != out.end()) continue;
        out.push_back(c);
        if (notes) *notes += n;
        if (static_cast<int>(out.size()) == kMaxCollectionFilter) break;
    }
    return out;
}

// ---- the index ----

RowIndexStatements& RowIndex::statements() {
    if (!statements_) statements_ = std::make_unique<RowIndexStatements>(session_, dialect_);
    return *statements_;
}

void RowIndex::read_postings(soci::statement& st, std::vector<TermPosting>& out) {
    PostingBatch& b = statements().batch;
    // SOCI shrinks the vectors to the rows of the last fetch (to 0 at the end), and both
    // execute and fetch refuse vectors of size 0
    auto full_batch = [&] {
        for (auto* v : {&b.uid_hi, &b.uid_lo, &b.updated_us, &b.tfs, &b.lens}) v->resize(kPostingsBatch);
        b.pos.resize(kPostingsBatch);
    };
    full_batch();
    st.execute();
    for (;;) {
        full_batch();
        if (!st.fetch()) break;
        for (std::size_t i = 0; i < b.uid_hi.size(); ++i)
            out.push_back(unpack_posting(b.uid_hi[i], b.uid_lo[i], b.updated_us[i], b.tfs[i],
                                         b.lens[i], std::move(b.pos[i])));
    }
}

void RowIndex::begin_read_view() {
    for (const std::string& st : dialect_.begin_read_view()) session_ << st;
}

void RowIndex::end_read_view() { session_ << "COMMIT"; }

SearchCorpus RowIndex::search_corpus(long long user_id) {
    if (const Segments::ViewHead* head = segments_.view_head(user_id)) return head->corpus;
    RowIndexStatements& q = statements();
    q.params.user_id = user_id;
    return fetch_one(q.corpus()) ? q.corpus_row : SearchCorpus{};
}

std::vector<std::pair<std::string, long long>> RowIndex::prefix_terms(long long user_id,
                                                                      const std::string& prefix,
                                                                      int limit) {
    RowIndexStatements& q = statements();
    q.params.user_id = user_id;
    q.params.prefix = prefix;
    q.params.limit = limit;
    const bool bounded = prefix_end(prefix, q.params.prefix_end);
    soci::statement& st = q.prefix_terms(bounded);
    std::vector<std::pair<std::string, long long>> out;
    st.execute();
    while (st.fetch()) out.emplace_back(q.term_row, q.df);
    return out;
}

std::vector<TermPosting> RowIndex::term_postings(long long user_id, const std::string& term,
                                                 const SearchFilter& f, int limit,
                                                 bool with_positions) {
    // Unknown, foreign and malformed collection ids are ignored; none left: no notes.
    long long collection_notes = 0;
    const std::vector<long long> collections =
        listed_collections(user_id, f.collection_ids, find_collection_, &collection_notes);
    if (!f.collection_ids.empty() && collections.empty()) return {};
    RowIndexStatements& q = statements();
    q.params.user_id = user_id;
    q.params.term = term;
    q.params.limit = limit;
    set_filter(q.params, f);
    std::vector<TermPosting> rows =
        !may_have_rows(user_id) ? std::vector<TermPosting>()
        : collections.empty()   ? postings_of_term(user_id, term, f, limit, with_positions)
                                : postings_in_collections(collections, collection_notes, limit);
    return with_segments(user_id, term, f, limit, with_positions, collections, std::move(rows));
}

std::vector<TermPosting> RowIndex::with_segments(long long user_id, const std::string& term,
                                                 const SearchFilter& f, int limit,
                                                 bool with_positions,
                                                 const std::vector<long long>& collections,
                                                 std::vector<TermPosting> rows) {
    // The listed collections' notes, read only when a segment holds the term.
    std::set<std::pair<long long, long long>> members;
    bool members_read = false;
    NoteKeep keep;
    if (!collections.empty())
        keep = [&](const SegmentNote& n) {
            if (!members_read) {
                RowIndexStatements& q = statements();
                for (long long c : collections) {
                    q.params.collection_id = c;
                    soci::statement& st = q.collection_notes();
                    st.execute();
                    long long hi = 0, lo = 0;
                    while (st.fetch()) {
                        uuid_halves(q.params.note_uuid, hi, lo);
                        members.emplace(hi, lo);
                    }
                    end_read(st);
                }
                members_read = true;
            }
            return members.count({n.uid_hi, n.uid_lo}) > 0;
        };
    std::vector<TermPosting> seg;
    segments_.term_postings(user_id, term, f, limit, with_positions, keep, seg);
    return merge_rows_and_segments(std::move(rows), std::move(seg), limit);
}

std::vector<TermPosting> RowIndex::postings_of_term(long long, const std::string&,
                                                    const SearchFilter& f, int, bool) {
    // no bound and no flag: the scan skips the filter columns (most searches)
    const bool filtered =
        f.flags_any != 0 || !(f.created == TimeRange{}) || !(f.updated == TimeRange{});
    std::vector<TermPosting> out;
    read_postings(statements().postings(0, false, filtered), out);
    return out;
}

// Whichever side is smaller drives: the collections' notes (each probed in postings) when
// they are fewer than the term's notes, else the term's postings (each probed in the links).
// Both give the same rows in the same order; only the work differs.
std::vector<TermPosting> RowIndex::postings_in_collections(const std::vector<long long>& collections,
                                                           long long collection_notes, int limit) {
    RowIndexStatements& q = statements();
    std::vector<TermPosting> out;
    const long long df = fetch_one(q.term_df()) ? q.df : 0;
    if (df == 0) return out;
    if (collection_notes >= df) {
        std::vector<long long>& ids = q.params.collection_ids;
        for (std::size_t i = 0; i < ids.size(); ++i)
            ids[i] = collections[i < collections.size() ? i : 0];  // padding repeats a listed id
        read_postings(q.postings(static_cast<int>(collections.size()), false, true), out);
        return out;
    }
    soci::statement& st = q.postings(1, true, true);
    for (long long c : collections) {
        q.params.collection_id = c;
        read_postings(st, out);
    }
    // Merge: a note in several listed collections comes once; the global order and limit hold.
    std::sort(out.begin(), out.end(), candidate_before);
    out.erase(std::unique(out.begin(), out.end(), same_note), out.end());
    if (out.size() > static_cast<std::size_t>(limit)) out.resize(static_cast<std::size_t>(limit));
    return out;
}

std::vector<TermPosting> RowIndex::postings_at(long long user_id, const std::string& term,
                                               const std::vector<PostingNote>& notes) {
    // A note is live in one segment or has rows: only the others are looked up in the rows.
    std::vector<TermPosting> out;
    const std::vector<PostingNote> rest = segments_.postings_at(user_id, term, notes, out);
    for (TermPosting& p : rest.empty() ? std::vector<TermPosting>() : rows_postings_at(user_id, term, rest))
        out.push_back(std::move(p));
    return out;
}

std::vector<TermPosting> RowIndex::rows_postings_at(long long user_id, const std::string& term,
                                                    const std::vector<PostingNote>& notes) {
    RowIndexStatements& q = statements();
    q.params.user_id = user_id;
    q.params.term = term;
    for (std::size_t i = 0; i < q.params.at_updated.size(); ++i) {
        const PostingNote& n = notes[i < notes.size() ? i : 0];  // padding repeats a listed note
        q.params.at_updated[i] = n.updated_us;
        q.params.at_uid_hi[i] = n.uid_hi;
    }
    std::vector<TermPosting> rows;
    read_postings(q.postings_at(), rows);
    std::vector<TermPosting> out;
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
}

std::vector<IndexedNote> RowIndex::indexed_notes(long long user_id,
                                                 const std::vector<std::string>& ids) {
    RowIndexStatements& q = statements();
    q.params.user_id = user_id;
    std::vector<IndexedNote> out;
    out.reserve(ids.size());
    for (const std::string& id : ids) {
        const std::optional<std::string> c = parse_uuid(id);
        if (!c) continue;
        q.params.note_uuid = *c;
        if (!fetch_one(q.indexed_note())) continue;
        NoteTerms terms =
            note_terms(q.indexed_title, detail::decode_plain_text(q.indexed_content, q.indexed_plain_text));
        out.push_back(IndexedNote{q.indexed_row.id, q.indexed_row.updated_us,
                                  std::move(terms.title_terms), std::move(terms.body_terms)});
    }
    return out;
}

namespace {

// Binds ids[from, from + kHitsMax) that are uuids, canonical, to p.note_uuids (padded with
// the first to the shortest of kHitsLengths that holds them) and records where each sits in
// `ids`; returns that length, 0 when none of them is a uuid.
std::size_t bind_uuid_chunk(SearchParams& p, const std::vector<std::string>& ids, std::size_t from,
                            std::unordered_map<std::string, std::vector<std::size_t>>& places) {
    places.clear();
    std::size_t n = 0;
    for (std::size_t i = from; i < ids.size() && i < from + kHitsMax; ++i)
        if (const std::optional<std::string> c = parse_uuid(ids[i])) {
            p.note_uuids[n++] = *c;
            places[*c].push_back(i);
        }
    if (n == 0) return 0;
    const std::size_t length = *std::find_if(kHitsLengths.begin(), kHitsLengths.end(),
                                             [&](std::size_t l) { return l >= n; });
    for (std::size_t i = n; i < length; ++i) p.note_uuids[i] = p.note_uuids[0];
    return length;
}

}  // namespace

std::vector<SearchHit> RowIndex::notes_by_ids(long long user_id, const std::vector<std::string>& ids,
                                              bool with_content) {
    RowIndexStatements& q = statements();
    q.params.user_id = user_id;
    std::vector<SearchHit> out;
    out.reserve(ids.size());
    std::unordered_map<std::string, std::vector<std::size_t>> places;  // a listed id may repeat
    for (std::size_t from = 0; from < ids.size(); from += kHitsMax) {
        const std::size_t length = bind_uuid_chunk(q.params, ids, from, places);
        if (length == 0) continue;
        std::vector<std::optional<SearchHit>> found(std::min(kHitsMax, ids.size() - from));
        soci::statement& st = q.hits(length);
        st.execute();
        while (st.fetch()) {
            auto it = places.find(q.hit_row.uuid);
            if (it == places.end()) continue;
            const std::string plain = detail::decode_plain_text(q.hit_row.content, q.hit_plain_text);
            for (std::size_t i : it->second) found[i - from] = SearchHit{to_note(q.hit_row, with_content), plain};
        }
        for (auto& f : found)
            if (f) out.push_back(std::move(*f));
    }
    return out;
}

void RowIndex::save_snapshot(const SnapshotRecord& s) {
    const std::optional<std::string> id = parse_uuid(s.id);
    if (!id) throw std::invalid_argument("snapshot id is not a uuid");
    if (!valid_utf8(s.fingerprint)) throw std::invalid_argument("snapshot fingerprint is not UTF-8");
    const std::string ids = join_ids(s.note_ids);
    RowIndexStatements& q = statements();
    q.snapshot_row = s;
    q.snapshot_row.id = *id;
    q.snapshot_note_ids = ids;
    exec(q.snapshot_insert());
}

std::optional<SnapshotRecord> RowIndex::find_snapshot(long long user_id, const std::string& id,
                                                      long long now_us) {
    const std::optional<std::string> c = parse_uuid(id);
    if (!c) return std::nullopt;
    RowIndexStatements& q = statements();
    q.params.note_uuid = *c;
    q.params.user_id = user_id;
    q.params.now_us = now_us;
    if (!fetch_one(q.snapshot_find())) return std::nullopt;
    SnapshotRecord r = q.snapshot_row;
    r.id = *c;
    r.user_id = user_id;
    r.note_ids = split_list(q.snapshot_note_ids, ' ');
    return r;
}

int RowIndex::purge_snapshots(long long now_us, int max_rows) {
    RowIndexStatements& q = statements();
    q.params.now_us = now_us;
    q.params.limit = max_rows;
    soci::statement& st = q.snapshot_purge();
    exec(st);
    return static_cast<int>(st.get_affected_rows());
}

}  // namespace notesd::detail
