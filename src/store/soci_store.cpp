#include "store/soci_store.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <stdexcept>

#include "store/index_rows.hpp"
#include "store/index_sqlite.hpp"
#include "store/soci_collections.hpp"
#include "store/soci_notes.hpp"
#include "store/soci_stmt.hpp"
#include "store/sqlite_wal_writes.hpp"
#include "store/time_counts.hpp"
#include "base/log.hpp"
#include "base/util.hpp"

namespace notesd {

using detail::fetch_one;
using detail::Prep;

namespace {

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

}  // namespace

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
    default_cache(t, 128);
    // An import batch rewrites most leaf pages of the notes' indexes (their keys are random):
    // checkpointing once per 8,192 WAL pages (128 MiB at new files' 16 KiB pages) rather than
    // after every batch (SQLite's 1,000) copies such a page back once for several batches
    // (doc/benchmarks.md, "What an import writes").
    t.sqlite_wal_autocheckpoint = 8192;
    // A bulk tool's index upkeep (an import's compaction, pack) need not sync each step
    // (SociStore::step_write; doc/benchmarks.md, "An import in two stages").
    t.sync_index_steps = false;
    // Its final compaction's merge is the last part of an import, on one core without this.
    t.merge_threads = detail::bulk_threads();
    return std::make_unique<SociStore>(std::move(t));
}

std::unique_ptr<Store> open_store(const std::string& connection_string, int busy_timeout_ms,
                                  int connect_timeout_s) {
    DbTarget t = parse_connection_string(connection_string);
    // Pages are read with pread (mmap_mb is off by default): a larger page cache per connection
    // keeps most of a search's pages from one request to the next.
    default_cache(t, 256);
    if (busy_timeout_ms < 0) throw std::invalid_argument("busy timeout must not be negative");
    if (connect_timeout_s < 0) throw std::invalid_argument("connect timeout must not be negative");
    t.busy_timeout_ms = busy_timeout_ms;
    if (connect_timeout_s > 0 && t.backend != Backend::Sqlite)
        t.soci_params = with_connect_timeout(t.soci_params, connect_timeout_s);
    return std::make_unique<SociStore>(std::move(t));
}

std::unique_ptr<detail::IndexStrategy> detail::make_index_strategy(
    Backend backend, soci::session& session, const Dialect& dialect, Segments& segments,
    CollectionLookup find_collection) {
    if (backend == Backend::Sqlite)
        return std::make_unique<SqliteIndex>(session, dialect, segments, std::move(find_collection));
    return std::make_unique<RowIndex>(session, dialect, segments, std::move(find_collection));
}

SociStore::SociStore(DbTarget target)
    : target_(std::move(target)),
      dialect_(make_dialect(target_.backend)),
      segments_(sql_, *dialect_, detail::make_segment_block_reader(target_.backend, sql_, *dialect_)),
      pending_(sql_, *dialect_),
      index_(detail::make_index_strategy(
          target_.backend, sql_, *dialect_, segments_,
          [this](long long user_id, const std::string& uuid, long long* note_count) {
              return collection_row_id(user_id, uuid, note_count);
          })) {
    try {
        guarded("open", [&] { connect(); });
    } catch (const StoreUnavailable&) {
        throw;
    } catch (const std::runtime_error& e) {
        // Refused (a password, a database that does not exist) or failed in its set-up: the
        // database's state, not this program's, and safe to log (describe() has no values).
        throw StoreUnavailable(StoreFault::CannotOpen, std::string("cannot_open: ") + e.what());
    }
}

SociStore::~SociStore() = default;

void SociStore::connect() {
    if (target_.backend == Backend::Sqlite) detail::install_wal_write_gathering();
    sql_.open(dialect_->factory(), target_.soci_params);
    setup_session();
}

void SociStore::reconnect() {
    sql_.reconnect();
    setup_session();
    lost_ = false;
}

bool SociStore::recover(const char* op, const soci::soci_error& e, bool may_replay) {
    // Statements belong to the connection that failed; they go before any reconnect.
    drop_statements();
    // Never what(): SOCI appends the statement and its bound values to it.
    const std::string detail = std::string(op) + " (" + dialect_->describe(e) + ")";
    const bool was_lost = lost_;  // the error came from reconnecting
    std::optional<StoreFault> fault = dialect_->fault_of(e);
    // A failed reconnect is a lost connection, whatever else the client library says.
    if (!fault && was_lost) fault = StoreFault::ConnectionLost;
    if (!fault) throw std::runtime_error("database error during " + detail);
    if (needs_new_connection(*fault)) lost_ = true;
    if (may_replay && *fault == StoreFault::ConnectionLost && !was_lost && !reading_) {
        log_info("database connection lost: the read runs again on a new connection",
                 {{"op", op}, {"detail", dialect_->describe(e)}});
        return true;
    }
    throw StoreUnavailable(*fault, std::string(fault_name(*fault)) + " during " + detail);
}

void SociStore::setup_session() {
    if (target_.backend == Backend::Sqlite && !target_.sqlite_readonly) {
        // A new file (not one page yet, so before WAL mode writes its header) gets larger
        // pages and can give its free pages back (compact_index); both are fixed from the first
        // page on (a VACUUM outside WAL mode changes them, doc/upgrading.md).
        // (the busy timeout first, as in the dialect's setup: another connection may hold a
        // lock for a moment, e.g. the last one closing checkpoints and removes the WAL)
        sql_ << "PRAGMA busy_timeout=" + std::to_string(target_.busy_timeout_ms);
        long long pages = -1;
        sql_ << "PRAGMA main.page_count", soci::into(pages);
        if (pages == 0) {
            sql_ << "PRAGMA main.page_size=" + std::to_string(kNewFilePageBytes);
            sql_ << "PRAGMA main.auto_vacuum=INCREMENTAL";
        }
    }
    for (const std::string& s : dialect_->session_setup(target_)) sql_ << s;
    for (const std::string& s : index_->session_setup(target_)) sql_ << s;
    if (target_.backend == Backend::Sqlite) {
        lite_.busy_timeout_ms = target_.busy_timeout_ms;
        // synchronous=FULL (the default) as NORMAL plus a sync of the WAL after each write
        // transaction, outside the write lock (sqlite_direct.hpp); a file without a real path
        // keeps SQLite's own FULL.
        char* real = target_.sqlite_synchronous == "FULL" && !target_.sqlite_readonly
                         ? ::realpath(target_.sqlite_file.c_str(), nullptr)
                         : nullptr;
        if (real) {
            lite_.wal_path = std::string(real) + "-wal";
            std::free(real);
            lite_.sync_after_commit = true;
            sql_ << "PRAGMA main.synchronous=NORMAL";
        }
        detail::tune_sqlite_session(sql_, lite_);
    }
}

std::function<void()> SociStore::after_commit() {
    if (!lite_.sync_after_commit) return {};
    return [this] { detail::sync_wal(lite_); };
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
    notes_.reset();
    collections_.reset();
    time_counts_.reset();  // with the changes of a failed write
    index_->drop_statements();
    segments_.drop_statements();
    pending_.drop_statements();
}

detail::TimeCounts& SociStore::time_counts() {
    if (!time_counts_) time_counts_ = std::make_unique<detail::TimeCounts>(sql_, *dialect_);
    return *time_counts_;
}

detail::WriteStatements& SociStore::writes() {
    if (!writes_) writes_ = std::make_unique<detail::WriteStatements>(sql_, *dialect_);
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

// ---- administration ----

void SociStore::migrate() {
    const std::vector<EmbeddedMigration> ms = migrations_for(dialect_->name());
    if (ms.empty())
        throw std::runtime_error(std::string("no schema migrations for backend ") +
                                 dialect_->name());
    bool packing_added = false, segments_added = false;
    guarded("migrate", [&] {
        // Statements prepared against the old schema must not outlive it (PostgreSQL plans).
        drop_statements();
        index_->before_migration();
        // Building an index on a large table may take longer than any request may.
        for (const std::string& s : dialect_->wait_limits(0)) sql_ << s;
        sql_ << "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, "
                "name TEXT NOT NULL, applied_us BIGINT NOT NULL)";
        for (const EmbeddedMigration& m : ms)
            if (apply_migration(m)) {
                packing_added = packing_added || m.version == 6;
                segments_added = segments_added || m.version == 10;
            }
        for (const std::string& s : dialect_->wait_limits(target_.busy_timeout_ms)) sql_ << s;
    });
    // 006 (SQLite): every user's postings packed once the schema is committed, a transaction per
    // user, so the WAL never holds a large database's blocks at once. An interrupted run leaves
    // users unpacked: their searches read rows (same results) until `notesctl pack`.
    if (packing_added && !segments_added)
        for (const UserInfo& u : list_users()) pack_postings(u.id);
    // 010: every user's postings rows into segments, the same way (a transaction per user, in
    // batches of notes); an interrupted run leaves users in rows until `notesctl pack` or a
    // later migrate, and their searches are the same meanwhile.
    if (segments_added)
        for (const UserInfo& u : list_users()) {
            const IndexCompaction c = compact_index(u.id);
            if (c.folded_notes > 0)
                log_info("search index: postings rows folded into segments",
                         {{"user", u.name}, {"notes", std::to_string(c.folded_notes)},
                          {"segments", std::to_string(c.segments)}});
        }
}

// One transaction per migration, re-checked inside it, so concurrent migrators apply it once.
bool SociStore::apply_migration(const EmbeddedMigration& m) {
    detail::WriteTxn tx(sql_, dialect_->begin_write(), after_commit());
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
    if (version == 19) encode_stored_plain_texts();
}

int SociStore::schema_version() {
    return reading("schema_version", [&]() -> int {
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
        detail::WriteTxn tx(sql_, dialect_->begin_write(), after_commit());
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
    return reading("find_user", [&]() -> std::optional<UserInfo> {
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
    return reading("list_users", [&] {
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
                               long long now_us, TokenScope scope) {
    // A guard against storing a raw token by mistake: only a SHA-256 hex digest is accepted.
    const bool hex64 = token_hash.size() == 64 &&
                       std::all_of(token_hash.begin(), token_hash.end(), [](char c) {
                           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                       });
    if (!hex64) throw std::invalid_argument("token hash must be 64 lowercase hex digits");
    if (!valid_utf8(label) || !valid_utf8(prefix))
        throw std::invalid_argument("token label must be UTF-8");
    return guarded("add_token", [&] {
        detail::WriteTxn tx(sql_, dialect_->begin_write(), after_commit());
        lock_user(user_id);
        long long u = user_id;
        long long created = now_us;
        long long id = 0;
        std::string scope_name = detail::token_scope_name(scope);
        soci::statement st =
            Prep(sql_, "INSERT INTO tokens (user_id, token_hash, prefix, label, created_us, "
                       "scope) VALUES (:u, :h, :p, :l, :t, :s)")
                .in(u, "u").in(token_hash, "h").in(prefix, "p").in(label, "l").in(created, "t")
                .in(scope_name, "s").returning_id(*dialect_, id).done();
        run_insert(st, "tokens", id);
        tx.commit();
        return id;
    });
}

std::vector<TokenInfo> SociStore::list_tokens(long long user_id) {
    return reading("list_tokens", [&] {
        std::vector<TokenInfo> out;
        TokenInfo t;
        long long revoked = 0;
        soci::indicator revoked_ind = soci::i_ok;
        long long u = user_id;
        std::string scope;
        soci::statement st = Prep(sql_, "SELECT id, user_id, label, prefix, created_us, "
                                        "revoked_us, scope FROM tokens WHERE user_id = :u "
                                        "ORDER BY id")
                                 .out(t.id).out(t.user_id).out(t.label).out(t.prefix)
                                 .out(t.created_us).out(revoked, revoked_ind).out(scope)
                                 .in(u, "u").done();
        st.execute();
        while (st.fetch()) {
            t.scope = detail::token_scope(scope);
            t.revoked_us = revoked_ind == soci::i_ok ? std::optional<long long>(revoked)
                                                     : std::nullopt;
            out.push_back(t);
        }
        return out;
    });
}

bool SociStore::revoke_token(long long token_id, long long now_us) {
    return guarded("revoke_token", [&] {
        detail::WriteTxn tx(sql_, dialect_->begin_write(), after_commit());
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

