// The database a store test case runs against: NOTESD_TEST_DB (a connection string) or, without
// it, a fresh SQLite file of the case's own, migrated, and removed afterwards. Every case makes
// its own users, so a shared server database with data from earlier runs is fine.
#pragma once
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <soci/soci.h>

#include "store/dialect.hpp"
#include "store/store.hpp"
#include "base/util.hpp"

namespace notesd::test {

/// A note with this title and a new id, in no collection.
inline NoteInput plain_note(const std::string& title) {
    NoteInput n;
    n.id = new_uuid();
    n.title = title;
    n.snippet = "s";
    n.content = "c";
    n.created_us = n.updated_us = 5;
    return n;
}

/// Collections named "c" with these ids, created and updated at 1 (for write_batch).
inline std::vector<CollectionInput> plain_collections(const std::vector<std::string>& ids) {
    std::vector<CollectionInput> out;
    for (const std::string& id : ids) {
        CollectionInput c;
        c.id = id;
        c.title = "c";
        c.created_us = c.updated_us = 1;
        out.push_back(c);
    }
    return out;
}

struct StoreFixture {
    std::string dir;  ///< the SQLite file's directory; empty on a server
    std::string conn;
    DbTarget target;
    std::unique_ptr<Store> store;

    StoreFixture() {
        const char* env = std::getenv("NOTESD_TEST_DB");
        if (env && *env) {
            conn = env;
        } else {
            const char* tmp = std::getenv("TMPDIR");
            std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/notesd-store-XXXXXX";
            if (!mkdtemp(&tmpl[0])) throw std::runtime_error("mkdtemp failed");
            dir = tmpl;
            conn = "sqlite3://db=" + dir + "/test.db";
        }
        target = parse_connection_string(conn);
        store = open_store(conn);
        store->migrate();
    }
    ~StoreFixture() {
        store.reset();
        if (dir.empty()) return;
        remove_sqlite_files(dir + "/test.db");
        rmdir(dir.c_str());
    }
    /// Removes an SQLite file with its WAL, shared memory and snapshots files.
    static void remove_sqlite_files(const std::string& file) {
        for (const char* f : {"", "-wal", "-shm", "-snapshots", "-snapshots-wal", "-snapshots-shm"})
            std::remove((file + f).c_str());
    }
    StoreFixture(const StoreFixture&) = delete;
    StoreFixture& operator=(const StoreFixture&) = delete;

    bool sqlite() const { return target.backend == Backend::Sqlite; }
    bool server() const { return !sqlite(); }
    /// A new user with a unique name starting with `base`.
    long long user(const std::string& base) {
        return store->add_user(base + "-" + new_uuid().substr(0, 8), 1000);
    }
    /// A connection of our own to the same database, beside the store's (to read the tables
    /// directly, or to hold locks).
    std::unique_ptr<soci::session> raw() const {
        return std::make_unique<soci::session>(make_dialect(target.backend)->factory(),
                                               target.soci_params);
    }
};

}  // namespace notesd::test
