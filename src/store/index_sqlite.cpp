#include "store/index_sqlite.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdexcept>

#include "index/note_index.hpp"
#include "index/postings_format.hpp"
#include "base/util.hpp"
#include "store/plain_text_codec.hpp"

namespace notesd::detail {
namespace {

// One note's row by its whole key (a statement run per note costs a seek, no more).
constexpr const char* kPostingAtKeySql =
    "SELECT p.uid_hi, p.uid_lo, p.updated_us, p.tfs, p.lens, p.pos FROM postings p WHERE "
    "p.user_id = ?1 AND p.term = ?2 AND p.updated_us = ?3 AND p.uid_hi = ?4 AND p.uid_lo = ?5";

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

// The index key of a snapshot id: its first 8 bytes as an integer.
long long high_half(std::string_view bytes16) {
    unsigned long long v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | static_cast<unsigned char>(bytes16[static_cast<std::size_t>(i)]);
    return static_cast<long long>(v);
}

}  // namespace

// ---- statements ----

SqliteStmt& SqliteIndexStatements::posting_at_key() {
    return prepared_once(session, posting_at_key_, kPostingAtKeySql);
}

// SQLite numbers named parameters in order of appearance: :u is ?1 and :uuid ?2.
SqliteStmt& SqliteIndexStatements::indexed_note() {
    return prepared_once(session, indexed_note_, kIndexedNoteSql);
}

SqliteStmt& SqliteIndexStatements::hit() {
    return prepared_once(session, hit_, [&] { return std::string(kHitColumnsSql) + " = :uuid"; });
}

// Prepared once: through SOCI each was parsed and prepared again on every request.
SqliteStmt& SqliteIndexStatements::begin_read() {
    return prepared_once(session, begin_read_, "BEGIN");
}

SqliteStmt& SqliteIndexStatements::commit_read() {
    return prepared_once(session, commit_read_, "COMMIT");
}

// The snapshots table (created by SqliteIndex::snapshots): ?1 id_hi, ?2 id, ?3 user, ?4 fingerprint,
// ?5 created, ?6 expires, ?7 note ids (16 bytes each).
SqliteStmt& SqliteIndexStatements::snapshot_insert() {
    return prepared_once(
        session, snapshot_insert_,
        "INSERT INTO snap.search_snapshots (id_hi, id, user_id, fingerprint, created_us, "
        "expires_us, note_ids) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
}

// ?1 id_hi, ?2 user, ?3 now.
SqliteStmt& SqliteIndexStatements::snapshot_find() {
    return prepared_once(session, snapshot_find_,
                         "SELECT id, fingerprint, created_us, expires_us, note_ids FROM "
                         "snap.search_snapshots WHERE id_hi = ?1 AND user_id = ?2 AND expires_us > ?3");
}

// The oldest ?2 rows (creation order), those of them expired (before ?1): rows of one lifetime
// expire in that order. After the lifetime was made shorter, rows made under the longer one
// hold the purge back until they expire themselves; they are never served after their expiry.
SqliteStmt& SqliteIndexStatements::snapshot_purge() {
    return prepared_once(session, snapshot_purge_,
                         "DELETE FROM snap.search_snapshots WHERE seq IN (SELECT seq FROM "
                         "snap.search_snapshots ORDER BY seq LIMIT ?2) AND expires_us <= ?1");
}

// ---- the index ----

SqliteIndexStatements& SqliteIndex::own() {
    if (!own_) own_ = std::make_unique<SqliteIndexStatements>(session_);
    return *own_;
}

void SqliteIndex::drop_statements() {
    own_.reset();
    RowIndex::drop_statements();
}

std::vector<std::string> SqliteIndex::session_setup(const DbTarget& t) {
    snap_attached_ = snap_ready_ = false;  // a new connection
    attach_sql_.clear();
    // A read-only database gets no snapshots file: it could not save a snapshot either.
    if (t.sqlite_readonly) return {};
    // No user data lives in the snapshots file: losing it only expires the open snapshots, so
    // it syncs only at checkpoints (NORMAL, still safe from corruption in WAL mode) whatever the
    // main file's synchronous=: a search that saves a snapshot never waits for an fsync.
    snapshots_file_ = sqlite_snapshots_file(t);
    model_file_ = t.sqlite_file;
    std::string quoted;
    for (char c : snapshots_file_) quoted += c == '\'' ? std::string("''") : std::string(1, c);
    // Rows appended in creation order (seq), which is also the order purge_snapshots removes
    // them in; ids as 16-byte blobs; found by the id's first 8 bytes as an integer. All but
    // the ATTACH may run again after a failure.
    attach_sql_ = {"ATTACH DATABASE '" + quoted + "' AS snap",
                   "PRAGMA snap.journal_mode=WAL",
                   "PRAGMA snap.synchronous=NORMAL",
                   "CREATE TABLE IF NOT EXISTS snap.search_snapshots (seq INTEGER PRIMARY KEY, "
                   "id_hi INTEGER NOT NULL, id BLOB NOT NULL, user_id INTEGER NOT NULL, "
                   "fingerprint TEXT NOT NULL, created_us INTEGER NOT NULL, expires_us INTEGER "
                   "NOT NULL, note_ids BLOB NOT NULL)",
                   "CREATE INDEX IF NOT EXISTS snap.search_snapshots_by_id ON "
                   "search_snapshots (id_hi)"};
    return {};
}

SqliteIndexStatements& SqliteIndex::snapshots() {
    if (snap_ready_) return own();
    // The operator's choice, not a bug: like a read-only file, a 503 naming the fault.
    if (attach_sql_.empty())
        throw StoreUnavailable(StoreFault::ReadOnly,
                               "read_only: a database opened readonly keeps no search snapshots");
    if (!snap_attached_) {
        // Created here: ATTACH could not create it under `nocreate`.
        if (snapshots_file_ != ":memory:") create_like(snapshots_file_, model_file_);
        session_ << attach_sql_.front();
        snap_attached_ = true;
    }
    for (std::size_t i = 1; i < attach_sql_.size(); ++i) session_ << attach_sql_[i];
    snap_ready_ = true;
    return own();
}

// Deferred: the read lock is taken at the first read.
void SqliteIndex::begin_read_view() { own().begin_read().run(); }

void SqliteIndex::end_read_view() { own().commit_read().run(); }

std::vector<TermPosting> SqliteIndex::postings_of_term(long long user_id, const std::string& term,
                                                       const SearchFilter& f, int limit,
                                                       bool with_positions) {
    std::vector<TermPosting> out;
    own().packed.read(user_id, term,
                      PostingsWindow{f.updated.min_us, f.updated.max_us, f.created.min_us,
                                     f.created.max_us, f.flags_any},
                      limit, with_positions, out);
    return out;
}

std::vector<TermPosting> SqliteIndex::rows_postings_at(long long user_id, const std::string& term,
                                                  const std::vector<PostingNote>& notes) {
    std::vector<TermPosting> out;
    SqliteStmt& st = own().posting_at_key();
    st.bind(1, user_id).bind(2, term);  // bindings outlive each run: only the key changes
    for (const PostingNote& n : notes) {
        st.bind(3, n.updated_us).bind(4, n.uid_hi).bind(5, n.uid_lo);
        while (st.step())
            out.push_back(unpack_posting(st.i64(0), st.i64(1), st.i64(2), st.i64(3), st.i64(4),
                                         std::string(st.text(5))));
    }
    return out;
}

std::vector<IndexedNote> SqliteIndex::indexed_notes(long long user_id,
                                                    const std::vector<std::string>& ids) {
    std::vector<IndexedNote> out;
    out.reserve(ids.size());
    SqliteStmt& st = own().indexed_note();
    for (const std::string& id : ids) {
        const std::optional<std::string> c = parse_uuid(id);
        if (!c) continue;
        st.bind(1, user_id).bind(2, *c);
        if (!st.step()) continue;
        NoteTerms terms = note_terms(st.text(2), detail::decode_plain_text(st.text(3), st.text(4)));
        out.push_back(IndexedNote{std::string(st.text(0)), st.i64(1), std::move(terms.title_terms),
                                  std::move(terms.body_terms)});
        st.reset();
    }
    return out;
}

// One seek per note, without an IN list's temporary index.
std::vector<SearchHit> SqliteIndex::notes_by_ids(long long user_id,
                                                 const std::vector<std::string>& ids,
                                                 bool with_content) {
    std::vector<SearchHit> out;
    out.reserve(ids.size());
    SqliteStmt& st = own().hit();
    NoteRow& r = own().hit_row;
    for (const std::string& id : ids) {
        const std::optional<std::string> c = parse_uuid(id);
        if (!c) continue;
        st.bind(1, user_id).bind(2, *c);
        if (!st.step()) continue;
        int col = 0;
        r.uuid = st.text(col++);
        r.title = st.text(col++);
        r.snippet = st.text(col++);
        r.created_us = st.i64(col++);
        r.updated_us = st.i64(col++);
        r.collection_uuids = st.text(col++);
        r.audio_uuids = st.text(col++);
        const std::string_view content = st.text(col++);
        std::string plain = detail::decode_plain_text(content, st.text(col));
        if (with_content) r.content = content;
        st.reset();
        out.push_back(SearchHit{to_note(r, with_content), std::move(plain)});
    }
    return out;
}

void SqliteIndex::save_snapshot(const SnapshotRecord& s) {
    std::string id, ids;
    if (!append_uuid_bytes(id, s.id)) throw std::invalid_argument("snapshot id is not a uuid");
    if (!valid_utf8(s.fingerprint)) throw std::invalid_argument("snapshot fingerprint is not UTF-8");
    ids.reserve(16 * s.note_ids.size());
    for (const std::string& n : s.note_ids)
        if (!append_uuid_bytes(ids, n)) throw std::invalid_argument("snapshot note id is not a uuid");
    SqliteStmt& st = snapshots().snapshot_insert();
    st.bind(1, high_half(id)).bind_blob(2, id).bind(3, s.user_id).bind(4, s.fingerprint);
    st.bind(5, s.created_us).bind(6, s.expires_us).bind_blob(7, ids);
    st.run();
}

std::optional<SnapshotRecord> SqliteIndex::find_snapshot(long long user_id, const std::string& id,
                                                         long long now_us) {
    std::string key;
    if (!append_uuid_bytes(key, id)) return std::nullopt;
    SqliteStmt& st = snapshots().snapshot_find();
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
        for (std::size_t i = 0; i + 16 <= ids.size(); i += 16)
            r.note_ids.push_back(uuid_from_bytes(ids.substr(i, 16)));
        out = std::move(r);
    }
    return out;
}

int SqliteIndex::purge_snapshots(long long now_us, int max_rows) {
    SqliteStmt& st = snapshots().snapshot_purge();
    st.bind(1, now_us).bind(2, static_cast<long long>(max_rows));
    st.run();
    return st.changes();
}

// Blocks holding a key whose row changes go first (sqlite_packed.hpp), term by term.
void SqliteIndex::before_postings_write(long long user_id, const std::vector<IndexDelta::Op>& ops) {
    PackedPostings& packed = own().packed;
    std::vector<ListKey> keys;
    for (std::size_t i = 0; i < ops.size();) {
        std::size_t j = i;
        keys.clear();
        for (; j < ops.size() && ops[j].key.term == ops[i].key.term; ++j)
            keys.push_back(ListKey{ops[j].key.updated_us, ops[j].key.uid_hi, ops[j].key.uid_lo});
        packed.invalidate(user_id, ops[i].key.term, keys);
        i = j;
    }
}

long long SqliteIndex::pack_user(long long user_id) { return own().packed.pack_user(user_id); }

// A reader of a packed term sees blocks where they are and rows in the gaps: that must be
// exactly the term's rows, in their order (a stale block would show a changed note's old row).
std::vector<std::string> SqliteIndex::check_packed_copy(long long user_id) {
    std::vector<std::string> terms, out;
    SqliteStmt packed_terms(session_, "SELECT DISTINCT term FROM postings_packed WHERE user_id = ?1");
    packed_terms.bind(1, user_id);
    while (packed_terms.step()) terms.emplace_back(packed_terms.text(0));
    SqliteStmt rows(session_, "SELECT uid_hi, uid_lo, updated_us, tfs, lens, pos FROM postings "
                              "WHERE user_id = ?1 AND term = ?2 ORDER BY updated_us DESC, "
                              "uid_hi DESC, uid_lo DESC");
    for (const std::string& term : terms) {
        std::vector<TermPosting> read;
        own().packed.read(user_id, term, PostingsWindow{}, INT64_MAX, true, read);
        rows.bind(1, user_id).bind(2, term);
        std::size_t i = 0;
        bool same = true;
        while (rows.step()) {
            const TermPosting p = unpack_posting(rows.i64(0), rows.i64(1), rows.i64(2), rows.i64(3),
                                                 rows.i64(4), std::string(rows.text(5)));
            const TermPosting* r = i < read.size() ? &read[i] : nullptr;
            ++i;
            same = same && r && r->uid_hi == p.uid_hi && r->uid_lo == p.uid_lo &&
                   r->updated_us == p.updated_us && r->title_tf == p.title_tf &&
                   r->body_tf == p.body_tf && r->title_len == p.title_len &&
                   r->body_len == p.body_len && r->positions == p.positions;
        }
        if (!same || i != read.size())
            out.push_back("packed postings of term '" + term + "' differ from its rows");
    }
    return out;
}

}  // namespace notesd::detail
