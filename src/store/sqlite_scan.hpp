// SQLite only: the candidate postings scans stepped with SQLite's own API instead of SOCI's.
// A search reads up to 20,000 postings rows per query word; SOCI's per-row exchange of six
// typed values cost about as much as SQLite's own decoding of the row (doc/benchmarks.md).
// The statement is prepared on the connection of a SOCI session and finalized with the
// statement cache that owns it (SociStore drops that cache on every database error, before
// any reconnect).
#pragma once
#include <string>
#include <vector>

#include "model.hpp"

namespace soci {
class session;
}

namespace notesd::detail {

class SqliteScan {
public:
    /// Prepares `sql` (its result columns: uid_hi, uid_lo, updated_us, tfs, lens, pos) on the
    /// session's SQLite connection; the session must be SQLite (is_sqlite_session).
    SqliteScan(soci::session& s, const std::string& sql);
    ~SqliteScan();
    SqliteScan(const SqliteScan&) = delete;
    SqliteScan& operator=(const SqliteScan&) = delete;

    /// Binds a named parameter (":u") when the statement has it. Text is not copied: it must
    /// stay unchanged until read_postings returns.
    void bind(const char* name, long long value);
    void bind(const char* name, const std::string& text);
    /// Runs the statement and appends its rows; throws soci::sqlite3_soci_error on failure.
    void read_postings(std::vector<TermPosting>& out);

private:
    [[noreturn]] void fail(int rc) const;
    void* db_ = nullptr;  // sqlite3*
    void* st_ = nullptr;  // sqlite3_stmt*
};

/// Whether the session's backend is SOCI's SQLite one.
bool is_sqlite_session(soci::session& s);

}  // namespace notesd::detail
