#include "store/soci_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include "store/soci_stmt.hpp"
#include "base/util.hpp"

namespace notesd {

using detail::fetch_one;
using detail::Prep;
using detail::ReadStmts;

namespace {

// Keyset sentinel for a first page: above every canonical uuid (hex digits and '-') in byte
// order and in the usual collations, so `(sort, id) < (max, "g")` admits every row.
const char kAboveAnyUuid[] = "g";

bool unfiltered(const TimeRange& r) { return r == TimeRange{}; }

// The keyset upper bound, tightened by the inclusive upper bound of the sort column: SQLite
// uses only one upper bound for an index range, so without this a narrow date range would
// scan every newer row first. The date predicate itself stays in the SQL.
void keyset_start(long long& k, long long& k2, std::string& kid, const std::optional<PageKey>& after,
                  long long sort_max) {
    k = after ? after->sort_us : kMaxTime;
    kid = after ? after->id : kAboveAnyUuid;
    if (sort_max < k) {
        k = sort_max;
        kid = kAboveAnyUuid;
    }
    k2 = k;
}

std::vector<std::string> split_ids(const std::string& s) {
    std::vector<std::string> out;
    std::size_t b = 0;
    while (b < s.size()) {
        std::size_t e = s.find(',', b);
        if (e == std::string::npos) e = s.size();
        if (e > b) out.push_back(s.substr(b, e - b));
        b = e + 1;
    }
    return out;
}

// Server parameters (blank-separated `key=value` tokens, values possibly quoted) with any
// connect_timeout replaced by `seconds`: the configured timeout wins over the string's.
std::string with_connect_timeout(const std::string& params, int seconds) {
    std::string out;
    std::size_t i = 0;
    while (i < params.size()) {
        if (params[i] == ' ') { ++i; continue; }
        const std::size_t start = i;
        char quote = 0;
        while (i < params.size() && (quote || params[i] != ' ')) {
            if (quote && params[i] == quote) quote = 0;
            else if (!quote && (params[i] == '\'' || params[i] == '"')) quote = params[i];
            ++i;
        }
        const std::string token = params.substr(start, i - start);
        if (token.rfind("connect_timeout=", 0) == 0) continue;
        out += (out.empty() ? "" : " ") + token;
    }
    return out + (out.empty() ? "" : " ") + "connect_timeout=" + std::to_string(seconds);
}

void set_note_params(detail::NoteParams& p, long long user_id, const NoteFilter& f,
                     long long coll) {
    p.u = user_id;
    p.coll = coll;
    p.cmin = f.created.min_us;
    p.cmax = f.created.max_us;
    p.umin = f.updated.min_us;
    p.umax = f.updated.max_us;
    p.mask = p.mask2 = f.flags_any;
}

}  // namespace

NoteItem detail::to_note(const detail::NoteRow& r, bool with_content) {
    NoteItem n;
    n.id = r.uuid;
    n.title = r.title;
    n.snippet = r.snippet;
    if (with_content) n.content = r.content;
    n.created_us = r.created;
    n.updated_us = r.updated;
    n.collection_ids = split_ids(r.colls);
    n.audio_recording_ids = split_ids(r.audios);
    return n;
}

std::unique_ptr<Store> open_store(const std::string& connection_string) {
    return std::make_unique<SociStore>(parse_connection_string(connection_string));
}

namespace {

// An SQLite page cache of `mb` MiB per connection unless the connection string sets cache_mb=.
void default_cache(DbTarget& t, int mb) {
    if (t.backend == Backend::Sqlite && !t.sqlite_cache_set) t.sqlite_cache_mb = mb;
}

}  // namespace

std::unique_ptr<Store> open_store_for_bulk(const std::string& connection_string) {
    DbTarget t = parse_connection_string(connection_string);
    default_cache(t, 512);
    return std::make_unique<SociStore>(std::move(t));
}

std::unique_ptr<Store> open_store(const std::string& connection_string, int busy_timeout_ms,
                                  int connect_timeout_s) {
    DbTarget t = parse_connection_string(connection_string);
    // The pages beyond the mapped first 2 GB (mmap_mb) are read with pread: cached by the
    // connection, a search makes ~8 of those calls instead of ~49 (doc/benchmarks.md).
    default_cache(t, 256);
    if (busy_timeout_ms < 0) throw std::invalid_argument("busy timeout must not be negative");
    if (connect_timeout_s < 0) throw std::invalid_argument("connect timeout must not be negative");
    t.busy_timeout_ms = busy_timeout_ms;
    if (connect_timeout_s > 0 && t.backend != Backend::Sqlite)
        t.soci_params = with_connect_timeout(t.soci_params, connect_timeout_s);
    return std::make_unique<SociStore>(std::move(t));
}

SociStore::SociStore(DbTarget target)
    : target_(std::move(target)), dialect_(make_dialect(target_.backend)) {
    guarded("open", [&] { connect(); });
}

SociStore::~SociStore() = default;

void SociStore::connect() {
    sql_.open(dialect_->factory(), target_.soci_params);
    setup_session();
}

namespace {

// Creates `path`, when missing, as an empty file (an empty SQLite database) with the permissions
// of `model` and, made by root (notesctl run as root), its owner: SQLite treats its -wal and
// -shm files so, and the workers must write it. Failures are left to the SQLite open that follows.
void create_like(const std::string& path, const std::string& model) {
    struct stat m {};
    const bool have_model = ::stat(model.c_str(), &m) == 0;
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                          have_model ? (m.st_mode & 0666) : 0644);
    if (fd < 0) return;  // exists, or the open that follows says why
    if (have_model && ::geteuid() == 0) {
        const int rc = ::fchown(fd, m.st_uid, m.st_gid);
        (void)rc;  // on failure the file stays root's, and the workers' searches say so
    }
    ::close(fd);
}

}  // namespace

void SociStore::setup_session() {
    // created here: ATTACH could not create the snapshots file under `nocreate`
    if (target_.backend == Backend::Sqlite && !target_.sqlite_readonly)
        if (const std::string snap = sqlite_snapshots_file(target_); snap != ":memory:")
            create_like(snap, target_.sqlite_file);
    for (const std::string& s : dialect_->session_setup(target_)) sql_ << s;
    if (target_.backend == Backend::Sqlite) {
        lite_.busy_timeout_ms = target_.busy_timeout_ms;
        detail::tune_sqlite_session(sql_, lite_);
    }
}

void SociStore::defer_housekeeping() {
    if (target_.backend != Backend::Sqlite || lite_.defer_checkpoints) return;
    lite_.defer_checkpoints = true;
    guarded("defer_housekeeping", [&] { detail::tune_sqlite_session(sql_, lite_); });
}

void SociStore::housekeeping() noexcept {
    if (lost_ || reading_) return;
    try {
        detail::checkpoint_if_due(sql_, lite_, kCheckpointPages);
    } catch (...) {
    }
}

void SociStore::drop_statements() {
    reads_.reset();
    writes_.reset();
    search_.reset();
}

ReadStmts& SociStore::reads() {
    if (!reads_) reads_ = std::make_unique<ReadStmts>(sql_, *dialect_);
    return *reads_;
}

detail::SearchStmts& SociStore::searches() {
    if (!search_) search_ = std::make_unique<detail::SearchStmts>(sql_, *dialect_);
    return *search_;
}

detail::WriteStmts& SociStore::writes() {
    if (!writes_) writes_ = std::make_unique<detail::WriteStmts>(sql_, *dialect_);
    return *writes_;
}

long long SociStore::run_insert(soci::statement& st, const char* table, long long& id) {
    st.execute(true);
    if (!dialect_->insert_returns_id() && !sql_.get_last_insert_id(table, id))
        throw std::runtime_error(std::string("no id for the new row of ") + table);
    return id;
}

bool SociStore::table_exists(const std::string& name) {
    long long n = 0;
    sql_ << dialect_->table_exists(), soci::into(n), soci::use(name, "name");
    return n > 0;
}

// ---- request path ----

std::optional<Principal> SociStore::find_token(const std::string& token_hash) {
    return guarded("find_token", [&]() -> std::optional<Principal> {
        ReadStmts& r = reads();
        r.token_hash = token_hash;
        if (!fetch_one(r.find_token)) return std::nullopt;
        return Principal{r.tok_user, r.tok_id};
    });
}

long long SociStore::find_collection(long long user_id, const std::string& uuid,
                                     long long* note_count) {
    const std::optional<std::string> id = parse_uuid(uuid);
    if (!id) return 0;
    ReadStmts& r = reads();
    r.u = user_id;
    r.cuuid = *id;
    if (!fetch_one(r.find_coll)) return 0;
    if (note_count) *note_count = r.ccount;
    return r.cid;
}

long long SociStore::count_notes(long long user_id, const NoteFilter& f) {
    return guarded("count_notes", [&]() -> long long {
        ReadStmts& r = reads();
        const bool plain = unfiltered(f.created) && unfiltered(f.updated) && f.flags_any == 0;
        long long coll = 0;
        if (f.collection_id) {
            long long maintained = 0;
            coll = find_collection(user_id, *f.collection_id, &maintained);
            if (coll == 0) return 0;
            if (plain) return maintained;
        } else if (plain) {
            r.u = user_id;
            return fetch_one(r.user_counts) ? r.user_notes : 0;
        }
        set_note_params(r.np, user_id, f, coll);
        soci::statement& st = r.note_count(coll != 0);
        return fetch_one(st) ? r.count : 0;
    });
}

std::vector<NoteItem> SociStore::list_notes(long long user_id, const NoteFilter& f, OrderBy order,
                                            const std::optional<PageKey>& after, int limit,
                                            bool with_content) {
    if (limit <= 0) return {};
    return guarded("list_notes", [&] {
        std::vector<NoteItem> out;
        ReadStmts& r = reads();
        long long coll = 0;
        if (f.collection_id) {
            coll = find_collection(user_id, *f.collection_id, nullptr);
            if (coll == 0) return out;
        }
        set_note_params(r.np, user_id, f, coll);
        keyset_start(r.np.k, r.np.k2, r.np.kid, after,
                     order == OrderBy::UpdatedAt ? f.updated.max_us : f.created.max_us);
        r.np.lim = limit;
        soci::statement& st = r.note_list(order, coll != 0, with_content);
        out.reserve(static_cast<std::size_t>(limit));
        st.execute();
        while (st.fetch()) out.push_back(detail::to_note(r.nr, with_content));
        detail::end_read(st);
        return out;
    });
}

long long SociStore::count_collections(long long user_id, const CollectionFilter& f) {
    return guarded("count_collections", [&]() -> long long {
        ReadStmts& r = reads();
        if (unfiltered(f.created) && unfiltered(f.updated)) {
            r.u = user_id;
            return fetch_one(r.user_counts) ? r.user_colls : 0;
        }
        r.cp.u = user_id;
        r.cp.cmin = f.created.min_us;
        r.cp.cmax = f.created.max_us;
        r.cp.umin = f.updated.min_us;
        r.cp.umax = f.updated.max_us;
        return fetch_one(r.coll_count()) ? r.count : 0;
    });
}

std::vector<CollectionItem> SociStore::list_collections(long long user_id,
                                                        const CollectionFilter& f, OrderBy order,
                                                        const std::optional<PageKey>& after,
                                                        int limit) {
    if (limit <= 0) return {};
    return guarded("list_collections", [&] {
        ReadStmts& r = reads();
        detail::CollParams& p = r.cp;
        p.u = user_id;
        p.cmin = f.created.min_us;
        p.cmax = f.created.max_us;
        p.umin = f.updated.min_us;
        p.umax = f.updated.max_us;
        keyset_start(p.k, p.k2, p.kid, after,
                     order == OrderBy::UpdatedAt ? f.updated.max_us : f.created.max_us);
        p.lim = limit;
        soci::statement& st = r.coll_list(order);
        std::vector<CollectionItem> out;
        out.reserve(static_cast<std::size_t>(limit));
        st.execute();
        while (st.fetch()) {
            const detail::CollRow& c = r.cr;
            CollectionItem item{c.uuid, c.title, std::nullopt, c.created, c.updated, c.count};
            if (c.desc_ind == soci::i_ok) item.description = c.description;
            out.push_back(std::move(item));
        }
        detail::end_read(st);
        return out;
    });
}

// ---- administration ----

void SociStore::migrate() {
    const std::vector<EmbeddedMigration> ms = migrations_for(dialect_->name());
    if (ms.empty())
        throw std::runtime_error(std::string("no schema migrations for backend ") +
                                 dialect_->name());
    bool packing_added = false;
    guarded("migrate", [&] {
        // Statements prepared against the old schema must not outlive it (PostgreSQL plans).
        drop_statements();
        // Building an index on a large table may take longer than any request may.
        for (const std::string& s : dialect_->wait_limits(0)) sql_ << s;
        sql_ << "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, "
                "name TEXT NOT NULL, applied_us BIGINT NOT NULL)";
        for (const EmbeddedMigration& m : ms)
            if (apply_migration(m) && m.version == 6) packing_added = true;
        for (const std::string& s : dialect_->wait_limits(target_.busy_timeout_ms)) sql_ << s;
    });
    // 006 (SQLite): every user's postings packed once the schema is committed, a transaction per
    // user, so the WAL never holds a large database's blocks at once. An interrupted run leaves
    // users unpacked: their searches read rows (same results) until `notesctl pack`.
    if (packing_added)
        for (const UserInfo& u : list_users()) pack_postings(u.id);
}

// One transaction per migration, re-checked inside it, so concurrent migrators apply it once.
bool SociStore::apply_migration(const EmbeddedMigration& m) {
    detail::WriteTxn tx(sql_, dialect_->begin_write());
    long long version = m.version;
    long long applied = 0;
    sql_ << "SELECT " + dialect_->count_star() + " FROM schema_migrations WHERE version = :v",
        soci::into(applied), soci::use(version, "v");
    if (applied == 0) {
        for (const std::string& st : split_sql(m.sql)) sql_ << st;
        after_migration(m.version);
        const std::string name = m.name;
        long long now = now_us();
        sql_ << "INSERT INTO schema_migrations (version, name, applied_us) VALUES (:v, :n, :t)",
            soci::use(version, "v"), soci::use(name, "n"), soci::use(now, "t");
    }
    tx.commit();
    return applied == 0;
}

void SociStore::after_migration(int version) {
    // 003 emptied the postings to add the counts, 004 to add the positions; the rebuild writes
    // the columns of the newest schema, so it runs after the last script that empties them.
    if (version == 4) rebuild_postings();
}

int SociStore::schema_version() {
    return guarded("schema_version", [&]() -> int {
        if (!table_exists("schema_migrations")) return 0;
        long long v = 0;
        sql_ << "SELECT COALESCE(MAX(version), 0) FROM schema_migrations", soci::into(v);
        return static_cast<int>(v);
    });
}

long long SociStore::add_user(const std::string& name, long long now_us) {
    if (name.empty() || name.size() > 200 || !valid_utf8(name))
        throw std::invalid_argument("user name must be 1-200 bytes of UTF-8");
    return guarded("add_user", [&] {
        detail::WriteTxn tx(sql_, dialect_->begin_write());
        long long taken = 0;
        sql_ << "SELECT " + dialect_->count_star() + " FROM users WHERE name = :n",
            soci::into(taken), soci::use(name, "n");
        if (taken) throw std::invalid_argument("a user with this name already exists");
        long long created = now_us;
        long long id = 0;
        soci::statement st = Prep(sql_, "INSERT INTO users (name, created_us) VALUES (:n, :t)")
                                 .in(name, "n").in(created, "t").returning_id(*dialect_, id).done();
        run_insert(st, "users", id);
        tx.commit();
        return id;
    });
}

std::optional<UserInfo> SociStore::find_user(const std::string& name_or_id) {
    return guarded("find_user", [&]() -> std::optional<UserInfo> {
        UserInfo u;
        const std::string cols = "SELECT id, name, created_us, note_count, collection_count "
                                 "FROM users WHERE ";
        sql_ << cols + "name = :n", soci::into(u.id), soci::into(u.name), soci::into(u.created_us),
            soci::into(u.note_count), soci::into(u.collection_count), soci::use(name_or_id, "n");
        if (sql_.got_data()) return u;
        const bool digits = !name_or_id.empty() && name_or_id.size() <= 18 &&
                            std::all_of(name_or_id.begin(), name_or_id.end(),
                                        [](char c) { return c >= '0' && c <= '9'; });
        if (!digits) return std::nullopt;
        long long id = std::stoll(name_or_id);
        sql_ << cols + "id = :id", soci::into(u.id), soci::into(u.name), soci::into(u.created_us),
            soci::into(u.note_count), soci::into(u.collection_count), soci::use(id, "id");
        if (sql_.got_data()) return u;
        return std::nullopt;
    });
}

std::vector<UserInfo> SociStore::list_users() {
    return guarded("list_users", [&] {
        std::vector<UserInfo> out;
        UserInfo u;
        soci::statement st = Prep(sql_, "SELECT id, name, created_us, note_count, "
                                        "collection_count FROM users ORDER BY id")
                                 .out(u.id).out(u.name).out(u.created_us).out(u.note_count)
                                 .out(u.collection_count).done();
        st.execute();
        while (st.fetch()) out.push_back(u);
        return out;
    });
}

long long SociStore::add_token(long long user_id, const std::string& token_hash,
                               const std::string& prefix, const std::string& label,
                               long long now_us) {
    // A guard against storing a raw token by mistake: only a SHA-256 hex digest is accepted.
    const bool hex64 = token_hash.size() == 64 &&
                       std::all_of(token_hash.begin(), token_hash.end(), [](char c) {
                           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                       });
    if (!hex64) throw std::invalid_argument("token hash must be 64 lowercase hex digits");
    if (!valid_utf8(label) || !valid_utf8(prefix))
        throw std::invalid_argument("token label must be UTF-8");
    return guarded("add_token", [&] {
        detail::WriteTxn tx(sql_, dialect_->begin_write());
        lock_user(user_id);
        long long u = user_id;
        long long created = now_us;
        long long id = 0;
        soci::statement st =
            Prep(sql_, "INSERT INTO tokens (user_id, token_hash, prefix, label, created_us) "
                       "VALUES (:u, :h, :p, :l, :t)")
                .in(u, "u").in(token_hash, "h").in(prefix, "p").in(label, "l").in(created, "t")
                .returning_id(*dialect_, id).done();
        run_insert(st, "tokens", id);
        tx.commit();
        return id;
    });
}

std::vector<TokenInfo> SociStore::list_tokens(long long user_id) {
    return guarded("list_tokens", [&] {
        std::vector<TokenInfo> out;
        TokenInfo t;
        long long revoked = 0;
        soci::indicator revoked_ind = soci::i_ok;
        long long u = user_id;
        soci::statement st = Prep(sql_, "SELECT id, user_id, label, prefix, created_us, "
                                        "revoked_us FROM tokens WHERE user_id = :u ORDER BY id")
                                 .out(t.id).out(t.user_id).out(t.label).out(t.prefix)
                                 .out(t.created_us).out(revoked, revoked_ind).in(u, "u").done();
        st.execute();
        while (st.fetch()) {
            t.revoked_us = revoked_ind == soci::i_ok ? std::optional<long long>(revoked)
                                                     : std::nullopt;
            out.push_back(t);
        }
        return out;
    });
}

bool SociStore::revoke_token(long long token_id, long long now_us) {
    return guarded("revoke_token", [&] {
        detail::WriteTxn tx(sql_, dialect_->begin_write());
        long long id = token_id;
        long long now = now_us;
        long long n = 0;
        sql_ << "SELECT " + dialect_->count_star() + " FROM tokens WHERE id = :id", soci::into(n),
            soci::use(id, "id");
        if (n == 0) return false;
        sql_ << "UPDATE tokens SET revoked_us = :t WHERE id = :id AND revoked_us IS NULL",
            soci::use(now, "t"), soci::use(id, "id");
        tx.commit();
        return true;
    });
}

}  // namespace notesd

