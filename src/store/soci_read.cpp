// The request path's reads of SociStore (soci_read.hpp).
#include "store/soci_read.hpp"

#include <algorithm>

#include "store/soci_stmt.hpp"
#include "store/soci_store.hpp"
#include "store/time_counts.hpp"
#include "base/util.hpp"

namespace notesd {
namespace detail {
namespace {

// The FROM/WHERE of a note list or count. Inside a collection, note_collections' copies of
// the sort keys and flags drive the range scan; a count does not even join the notes.
// by_created_bucket: one created-time bucket's range of notes_by_created_bucket, ordered by
// updated time (SociStore::list_by_created_buckets).
std::string note_from_where(const Dialect& d, OrderBy o, bool in_collection, bool keyset,
                            bool join_notes, bool by_created_bucket = false) {
    const std::string t = in_collection ? "nc" : "n";
    // a page reads its sort index (Dialect::force_index); a count may take any
    const std::string hint =
        by_created_bucket ? d.force_index("notes_by_created_bucket")
        : keyset ? d.force_index(o == OrderBy::UpdatedAt ? "notes_by_updated" : "notes_by_created")
                 : "";
    std::string w = by_created_bucket
                        ? " FROM notes n" + hint + " WHERE n.user_id = :u AND n.created_bucket = :b"
                    : !in_collection ? " FROM notes n" + hint + " WHERE n.user_id = :u"
                    : join_notes   ? " FROM note_collections nc JOIN notes n ON n.id = nc.note_id"
                                     " WHERE nc.collection_id = :coll AND n.user_id = :u"
                                   : " FROM note_collections nc WHERE nc.collection_id = :coll";
    if (keyset) {
        const std::string sort = t + (o == OrderBy::UpdatedAt ? ".updated_us" : ".created_us");
        w += " AND " + d.keyset_before(sort, in_collection ? "nc.note_uuid" : "n.uuid");
    }
    w += " AND " + t + ".created_us >= :cmin AND " + t + ".created_us <= :cmax AND " + t +
         ".updated_us >= :umin AND " + t + ".updated_us <= :umax"
         " AND (:mask = 0 OR (" + t + ".flags & :mask2) <> 0)";
    return w;
}

void bind_note_params(Prep& p, NoteListParams& np) {
    p.in(np.user_id, "u").in(np.collection_id, "coll").in(np.after_sort, "k")
        .in(np.after_sort_again, "k2").in(np.after_id, "kid").in(np.created_min, "cmin")
        .in(np.created_max, "cmax").in(np.updated_min, "umin").in(np.updated_max, "umax")
        .in(np.flags_any, "mask").in(np.flags_any_again, "mask2").in(np.limit, "lim")
        .in(np.created_bucket, "b");
}

// The select list of a note list's rows; bind_note_row binds its outputs.
std::string select_note_columns(bool with_content) {
    return std::string("SELECT n.uuid, n.title, n.snippet, ") + (with_content ? "n.content, " : "") +
           "n.created_us, n.updated_us, n.collection_uuids, n.audio_uuids";
}

void bind_note_row(Prep& p, NoteRow& r, bool with_content) {
    p.out(r.uuid).out(r.title).out(r.snippet);
    if (with_content) p.out(r.content);
    p.out(r.created_us).out(r.updated_us).out(r.collection_uuids).out(r.audio_uuids);
}

std::string collection_where(const Dialect& d, OrderBy o, bool keyset) {
    std::string w = " FROM collections WHERE user_id = :u";
    if (keyset)
        w += " AND " + d.keyset_before(o == OrderBy::UpdatedAt ? "updated_us" : "created_us",
                                       "uuid");
    return w + " AND created_us >= :cmin AND created_us <= :cmax AND updated_us >= :umin AND "
               "updated_us <= :umax";
}

void bind_collection_params(Prep& p, CollectionListParams& cp) {
    p.in(cp.user_id, "u").in(cp.after_sort, "k").in(cp.after_sort_again, "k2")
        .in(cp.after_id, "kid").in(cp.created_min, "cmin").in(cp.created_max, "cmax")
        .in(cp.updated_min, "umin").in(cp.updated_max, "umax").in(cp.limit, "lim");
}

}  // namespace

NoteItem to_note(const NoteRow& r, bool with_content) {
    NoteItem n;
    n.id = r.uuid;
    n.title = r.title;
    n.snippet = r.snippet;
    if (with_content) n.content = r.content;
    n.created_us = r.created_us;
    n.updated_us = r.updated_us;
    n.collection_ids = split_list(r.collection_uuids, ',');
    n.audio_recording_ids = split_list(r.audio_uuids, ',');
    return n;
}

ReadStatements::ReadStatements(soci::session& s, const Dialect& d)
    : session(s), dialect(d),
      find_token(Prep(s, "SELECT user_id, id, scope FROM tokens WHERE token_hash = :h AND "
                         "revoked_us IS NULL")
                     .out(token_user_id).out(token_id).out(token_scope).in(token_hash, "h").done()),
      find_collection(Prep(s, "SELECT id, note_count FROM collections WHERE user_id = :u AND "
                              "uuid = :uuid")
                          .out(collection_id).out(collection_note_count).in(user_id, "u")
                          .in(collection_uuid, "uuid").done()),
      user_counts(Prep(s, "SELECT note_count, collection_count FROM users WHERE id = :u")
                      .out(user_note_count).out(user_collection_count).in(user_id, "u").done()) {}

soci::statement& ReadStatements::note_list(OrderBy o, bool in_collection, bool with_content) {
    std::optional<soci::statement>& slot =
        note_list_[o == OrderBy::UpdatedAt][in_collection][with_content];
    if (slot) return *slot;
    const std::string t = in_collection ? "nc" : "n";
    const std::string sort = t + (o == OrderBy::UpdatedAt ? ".updated_us" : ".created_us");
    const std::string id = in_collection ? "nc.note_uuid" : "n.uuid";
    const std::string sql = select_note_columns(with_content) +
                            note_from_where(dialect, o, in_collection, true, true) + " ORDER BY " +
                            sort + " DESC, " + id + " DESC" + dialect.limit_clause();
    Prep p(session, sql);
    bind_note_row(p, note_row, with_content);
    bind_note_params(p, note_params);
    return slot.emplace(p.done());
}

soci::statement& ReadStatements::bucket_keys() {
    if (bucket_keys_) return *bucket_keys_;
    Prep p(session, "SELECT n.updated_us, n.uuid" +
                        note_from_where(dialect, OrderBy::UpdatedAt, false, true, true, true) +
                        " ORDER BY n.updated_us DESC, n.uuid DESC" + dialect.limit_clause());
    p.out(bucket_key_updated).out(bucket_key_uuid);
    bind_note_params(p, note_params);
    return bucket_keys_.emplace(p.done());
}

soci::statement& ReadStatements::bucket_notes(bool with_content) {
    std::optional<soci::statement>& slot = bucket_notes_[with_content];
    if (slot) return *slot;
    Prep p(session, select_note_columns(with_content) +
                        note_from_where(dialect, OrderBy::UpdatedAt, false, true, true, true) +
                        " ORDER BY n.updated_us DESC, n.uuid DESC" + dialect.limit_clause());
    bind_note_row(p, note_row, with_content);
    bind_note_params(p, note_params);
    return slot.emplace(p.done());
}

soci::statement& ReadStatements::created_edge_of(bool newest) {
    std::optional<soci::statement>& slot = created_edge_[newest];
    if (slot) return *slot;
    Prep p(session, std::string("SELECT ") + (newest ? "MAX" : "MIN") +
                        "(created_us) FROM notes WHERE user_id = :u");
    p.out(created_edge, created_edge_ind).in(user_id, "u");
    return slot.emplace(p.done());
}

soci::statement& ReadStatements::note_count(bool in_collection) {
    std::optional<soci::statement>& slot = note_count_[in_collection];
    if (slot) return *slot;
    Prep p(session, "SELECT " + dialect.count_star() +
                        note_from_where(dialect, OrderBy::UpdatedAt, in_collection, false, false));
    p.out(count);
    bind_note_params(p, note_params);
    return slot.emplace(p.done());
}

// With a flag filter, a COUNT over the collection's note_collections range would test the
// flags of every note of the collection. note_collections_by_flags (schema 015) orders the range
// by flags value, so the count reads only the ranges of the values having an asked bit: the
// matching notes and no others (a collection of 18,391 notes, contains_tasks: 1.4 ms -> 0.11,
// 0.23 with date bounds). The unary `+` keeps SQLite's planner off the time columns' indexes,
// which it takes for any bound range; the hint does it on MariaDB.
soci::statement& ReadStatements::flagged_collection_count(bool dated) {
    std::optional<soci::statement>& slot = flagged_collection_count_[dated];
    if (slot) return *slot;
    std::string values;
    for (std::size_t i = 0; i < flag_values.size(); ++i) values += (i ? ", :f" : ":f") + std::to_string(i);
    Prep p(session, "SELECT " + dialect.count_star() + " FROM note_collections nc" +
                        dialect.force_index("note_collections_by_flags") +
                        " WHERE nc.collection_id = :coll AND nc.flags IN (" + values + ")" +
                        (dated ? " AND +nc.created_us >= :cmin AND +nc.created_us <= :cmax AND "
                                 "+nc.updated_us >= :umin AND +nc.updated_us <= :umax"
                               : ""));
    p.out(count);
    for (std::size_t i = 0; i < flag_values.size(); ++i)
        p.in(flag_values[i], ("f" + std::to_string(i)).c_str());
    bind_note_params(p, note_params);
    return slot.emplace(p.done());
}

soci::statement& ReadStatements::collection_list(OrderBy o) {
    std::optional<soci::statement>& slot = collection_list_[o == OrderBy::UpdatedAt];
    if (slot) return *slot;
    const std::string sort = o == OrderBy::UpdatedAt ? "updated_us" : "created_us";
    Prep p(session, "SELECT uuid, title, description, created_us, updated_us, note_count" +
                        collection_where(dialect, o, true) + " ORDER BY " + sort +
                        " DESC, uuid DESC" + dialect.limit_clause());
    CollectionRow& r = collection_row;
    p.out(r.uuid).out(r.title).out(r.description, r.description_ind).out(r.created_us)
        .out(r.updated_us).out(r.note_count);
    bind_collection_params(p, collection_params);
    return slot.emplace(p.done());
}

soci::statement& ReadStatements::collection_count() {
    if (collection_count_) return *collection_count_;
    Prep p(session, "SELECT " + dialect.count_star() +
                        collection_where(dialect, OrderBy::UpdatedAt, false));
    p.out(count);
    bind_collection_params(p, collection_params);
    return collection_count_.emplace(p.done());
}

}  // namespace detail

namespace {

using detail::fetch_one;
using detail::ReadStatements;

// Keyset sentinel for a first page: above every canonical uuid (hex digits and '-') in byte
// order and in the usual collations, so `(sort, id) < (max, "g")` admits every row.
const char kAboveAnyUuid[] = "g";

bool unfiltered(const TimeRange& r) { return r == TimeRange{}; }

// The keyset upper bound, tightened by the inclusive upper bound of the sort column: SQLite
// uses only one upper bound for an index range, so without this a narrow date range would
// scan every newer row first. The date predicate itself stays in the SQL.
template <class Params>
void keyset_start(Params& p, const std::optional<PageKey>& after, long long sort_max) {
    p.after_sort = after ? after->sort_us : kMaxTime;
    p.after_id = after ? after->id : kAboveAnyUuid;
    if (sort_max < p.after_sort) {
        p.after_sort = sort_max;
        p.after_id = kAboveAnyUuid;
    }
    p.after_sort_again = p.after_sort;
}

void set_note_params(detail::NoteListParams& p, long long user_id, const NoteFilter& f,
                     long long collection_id) {
    p.user_id = user_id;
    p.collection_id = collection_id;
    p.created_min = f.created.min_us;
    p.created_max = f.created.max_us;
    p.updated_min = f.updated.min_us;
    p.updated_max = f.updated.max_us;
    p.flags_any = p.flags_any_again = f.flags_any;
}

void set_collection_params(detail::CollectionListParams& p, long long user_id,
                           const CollectionFilter& f) {
    p.user_id = user_id;
    p.created_min = f.created.min_us;
    p.created_max = f.created.max_us;
    p.updated_min = f.updated.min_us;
    p.updated_max = f.updated.max_us;
}

// notes.created_bucket (schema 018): created_us >> kCreatedBucketShift, 2^40 us (12.7 days).
constexpr int kCreatedBucketShift = 40;
// A created range over more buckets than this reads notes_by_updated as before: each bucket
// costs a statement even when empty, and a range that wide holds many recent notes, which that
// scan finds at once.
constexpr long long kMaxCreatedBuckets = 64;

bool newer(long long updated_a, const std::string& uuid_a, long long updated_b,
           const std::string& uuid_b) {
    return updated_a != updated_b ? updated_a > updated_b : uuid_a > uuid_b;
}

// A page ordered by updated time of the notes created in f.created, outside a collection, as
// the merge of one range of notes_by_created_bucket per created-time bucket the range touches.
// notes_by_updated would be read from the newest update down to the page's notes: for a created
// range far back, past every note written since (notes are rarely updated long after they were
// created). First the keys: each bucket's newest `limit` keys below the page's start, newest
// bucket first, each bucket's scan stopping at the oldest key of the best `limit` found so far;
// then the rows of the buckets that hold the page's keys, from the page's oldest key up. The
// bounds, flags and keyset are note_list's, so the rows and the order are the same. nullopt
// when the range spans too many buckets or negative times (MariaDB shifts unsigned).
std::optional<std::vector<NoteItem>> list_by_created_buckets(ReadStatements& r, long long user_id,
                                                            const NoteFilter& f, int limit,
                                                            bool with_content) {
    detail::NoteListParams& p = r.note_params;
    long long lo = f.created.min_us, hi = f.created.max_us;
    for (const bool newest : {false, true}) {
        if ((newest ? hi : lo) != (newest ? kMaxTime : kMinTime)) continue;
        r.user_id = user_id;
        if (!fetch_one(r.created_edge_of(newest)) || r.created_edge_ind != soci::i_ok)
            return std::vector<NoteItem>{};  // no notes at all
        (newest ? hi : lo) = r.created_edge;
    }
    if (lo > hi) return std::vector<NoteItem>{};
    if (lo < 0 || (hi >> kCreatedBucketShift) - (lo >> kCreatedBucketShift) >= kMaxCreatedBuckets)
        return std::nullopt;
    struct Key {
        long long updated_us;
        std::string uuid;
        long long bucket;
    };
    const auto by_newest = [](const Key& a, const Key& b) {
        return newer(a.updated_us, a.uuid, b.updated_us, b.uuid);
    };
    const auto lim = static_cast<std::size_t>(limit);
    std::vector<Key> keys;
    for (long long b = hi >> kCreatedBucketShift; b >= lo >> kCreatedBucketShift; --b) {
        p.created_bucket = b;
        soci::statement& st = r.bucket_keys();
        st.execute();
        while (st.fetch()) keys.push_back(Key{r.bucket_key_updated, r.bucket_key_uuid, b});
        detail::end_read(st);
        if (keys.size() >= lim) {
            std::sort(keys.begin(), keys.end(), by_newest);
            keys.resize(lim);
            // ties at the oldest key's time still pass, and are ordered by uuid below
            p.updated_min = std::max(p.updated_min, keys.back().updated_us);
        }
    }
    std::sort(keys.begin(), keys.end(), by_newest);
    if (keys.size() > lim) keys.resize(lim);
    std::vector<long long> buckets;
    for (const Key& k : keys)
        if (std::find(buckets.begin(), buckets.end(), k.bucket) == buckets.end())
            buckets.push_back(k.bucket);
    std::vector<NoteItem> out;
    if (keys.empty()) return out;
    p.updated_min = std::max(f.updated.min_us, keys.back().updated_us);
    for (const long long b : buckets) {
        p.created_bucket = b;
        soci::statement& st = r.bucket_notes(with_content);
        st.execute();
        while (st.fetch()) out.push_back(detail::to_note(r.note_row, with_content));
        detail::end_read(st);
    }
    if (out.size() < keys.size()) {
        // Outside a read view (a cursor page on a server) a note of the page was deleted or
        // updated past the page's start between the two passes: the short page would end the
        // walk early. notes_by_updated reads the page in one statement.
        p.updated_min = f.updated.min_us;
        return std::nullopt;
    }
    std::sort(out.begin(), out.end(), [](const NoteItem& a, const NoteItem& b) {
        return newer(a.updated_us, a.id, b.updated_us, b.id);
    });
    if (out.size() > lim) out.resize(lim);
    return out;
}

}  // namespace

ReadStatements& SociStore::reads() {
    if (!reads_) reads_ = std::make_unique<ReadStatements>(sql_, *dialect_);
    return *reads_;
}

std::optional<Principal> SociStore::find_token(const std::string& token_hash) {
    return reading("find_token", [&]() -> std::optional<Principal> {
        ReadStatements& r = reads();
        r.token_hash = token_hash;
        if (!fetch_one(r.find_token)) return std::nullopt;
        return Principal{r.token_user_id, r.token_id, detail::token_scope(r.token_scope)};
    });
}

long long SociStore::collection_row_id(long long user_id, const std::string& uuid,
                                     long long* note_count) {
    const std::optional<std::string> id = parse_uuid(uuid);
    if (!id) return 0;
    ReadStatements& r = reads();
    r.user_id = user_id;
    r.collection_uuid = *id;
    if (!fetch_one(r.find_collection)) return 0;
    if (note_count) *note_count = r.collection_note_count;
    return r.collection_id;
}

// Unfiltered: the users or collections row's maintained count. Filtered outside a collection:
// the time counts (time_counts.hpp). Inside a collection: a COUNT over its note_collections
// index range, which holds only that collection's notes; with a flag filter, only the ranges of
// the flags values that match (flagged_collection_count).
long long SociStore::count_notes(long long user_id, const NoteFilter& f) {
    return reading("count_notes", [&]() -> long long {
        ReadStatements& r = reads();
        const bool plain = unfiltered(f.created) && unfiltered(f.updated) && f.flags_any == 0;
        long long collection = 0;
        if (f.collection_id) {
            long long maintained = 0;
            collection = collection_row_id(user_id, *f.collection_id, &maintained);
            if (collection == 0) return 0;
            if (plain) return maintained;
        } else if (plain) {
            r.user_id = user_id;
            return fetch_one(r.user_counts) ? r.user_note_count : 0;
        } else {
            return time_counts().count(user_id, f);
        }
        set_note_params(r.note_params, user_id, f, collection);
        if (f.flags_any == 0) return fetch_one(r.note_count(true)) ? r.count : 0;
        std::size_t n = 0;
        for (int v = 1; v <= kAllFlags; ++v)
            if ((v & f.flags_any) != 0) r.flag_values[n++] = v;
        std::fill(r.flag_values.begin() + static_cast<std::ptrdiff_t>(n), r.flag_values.end(), -1);
        const bool dated = !unfiltered(f.created) || !unfiltered(f.updated);
        return fetch_one(r.flagged_collection_count(dated)) ? r.count : 0;
    });
}

std::vector<NoteItem> SociStore::list_notes(long long user_id, const NoteFilter& f, OrderBy order,
                                            const std::optional<PageKey>& after, int limit,
                                            bool with_content) {
    if (limit <= 0) return {};
    return reading("list_notes", [&] {
        std::vector<NoteItem> out;
        ReadStatements& r = reads();
        long long collection = 0;
        if (f.collection_id) {
            collection = collection_row_id(user_id, *f.collection_id, nullptr);
            if (collection == 0) return out;
        }
        set_note_params(r.note_params, user_id, f, collection);
        keyset_start(r.note_params, after,
                     order == OrderBy::UpdatedAt ? f.updated.max_us : f.created.max_us);
        r.note_params.limit = limit;
        if (order == OrderBy::UpdatedAt && collection == 0 && !unfiltered(f.created))
            if (std::optional<std::vector<NoteItem>> page =
                    list_by_created_buckets(r, user_id, f, limit, with_content))
                return std::move(*page);
        soci::statement& st = r.note_list(order, collection != 0, with_content);
        out.reserve(static_cast<std::size_t>(limit));
        st.execute();
        while (st.fetch()) out.push_back(detail::to_note(r.note_row, with_content));
        detail::end_read(st);
        return out;
    });
}

long long SociStore::count_collections(long long user_id, const CollectionFilter& f) {
    return reading("count_collections", [&]() -> long long {
        ReadStatements& r = reads();
        if (unfiltered(f.created) && unfiltered(f.updated)) {
            r.user_id = user_id;
            return fetch_one(r.user_counts) ? r.user_collection_count : 0;
        }
        set_collection_params(r.collection_params, user_id, f);
        return fetch_one(r.collection_count()) ? r.count : 0;
    });
}

std::vector<CollectionItem> SociStore::list_collections(long long user_id,
                                                        const CollectionFilter& f, OrderBy order,
                                                        const std::optional<PageKey>& after,
                                                        int limit) {
    if (limit <= 0) return {};
    return reading("list_collections", [&] {
        ReadStatements& r = reads();
        detail::CollectionListParams& p = r.collection_params;
        set_collection_params(p, user_id, f);
        keyset_start(p, after, order == OrderBy::UpdatedAt ? f.updated.max_us : f.created.max_us);
        p.limit = limit;
        soci::statement& st = r.collection_list(order);
        std::vector<CollectionItem> out;
        out.reserve(static_cast<std::size_t>(limit));
        st.execute();
        while (st.fetch()) {
            const detail::CollectionRow& c = r.collection_row;
            CollectionItem item{c.uuid, c.title, std::nullopt, c.created_us, c.updated_us,
                                c.note_count};
            if (c.description_ind == soci::i_ok) item.description = c.description;
            out.push_back(std::move(item));
        }
        detail::end_read(st);
        return out;
    });
}

}  // namespace notesd
