// The storage interface in domain terms. Handlers and the admin tool see only this.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../model.hpp"

namespace notesd {

class Store {
public:
    virtual ~Store() = default;

    // --- request path (every read is scoped to user_id) ---
    /// The principal owning an unrevoked token with this SHA-256 hex hash.
    virtual std::optional<Principal> find_token(const std::string& token_hash) = 0;
    virtual long long count_notes(long long user_id, const NoteFilter& f) = 0;
    /// Up to `limit` notes after `after`, ordered by (order_by value, id) descending.
    virtual std::vector<NoteItem> list_notes(long long user_id, const NoteFilter& f, OrderBy order,
                                             const std::optional<PageKey>& after, int limit,
                                             bool with_content) = 0;
    virtual long long count_collections(long long user_id, const CollectionFilter& f) = 0;
    virtual std::vector<CollectionItem> list_collections(long long user_id,
                                                         const CollectionFilter& f, OrderBy order,
                                                         const std::optional<PageKey>& after,
                                                         int limit) = 0;

    // --- administration (notesctl) ---
    virtual void migrate() = 0;
    virtual int schema_version() = 0;
    virtual long long add_user(const std::string& name, long long now_us) = 0;
    virtual std::optional<UserInfo> find_user(const std::string& name_or_id) = 0;
    virtual std::vector<UserInfo> list_users() = 0;
    virtual long long add_token(long long user_id, const std::string& token_hash,
                                const std::string& prefix, const std::string& label,
                                long long now_us) = 0;
    virtual std::vector<TokenInfo> list_tokens(long long user_id) = 0;
    /// false when no such token exists
    virtual bool revoke_token(long long token_id, long long now_us) = 0;
    /// Inserts or updates (by user and uuid) in one transaction; keeps note_count consistent.
    virtual std::vector<WriteOutcome> write_batch(long long user_id,
                                                  const std::vector<CollectionInput>& collections,
                                                  const std::vector<NoteInput>& notes) = 0;
    /// false when the user has no such note
    virtual bool delete_note(long long user_id, const std::string& note_id) = 0;
};

/// Opens a store from a SOCI connection string ("sqlite3://db=/path", "mysql://...",
/// "postgresql://..."). Throws std::runtime_error with a readable message on failure.
std::unique_ptr<Store> open_store(const std::string& connection_string);
/// open_store with an explicit busy timeout (SQLite) or lock wait (servers) in milliseconds;
/// it overrides a `timeout=` in the connection string.
std::unique_ptr<Store> open_store(const std::string& connection_string, int busy_timeout_ms);

}  // namespace notesd
