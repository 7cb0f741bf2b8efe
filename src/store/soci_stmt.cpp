// The SQL of the SOCI store (common to every backend; the differences come from Dialect) and
// the statement cache built from it.
#include "store/soci_stmt.hpp"
#include "store/soci_store.hpp"

#include <soci/sqlite3/soci-sqlite3.h>
#include <cstring>
#include <typeinfo>
#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace notesd {
namespace detail {
namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Every placeholder name in sql, outside quotes and not part of a `::` cast.
std::vector<std::string> placeholders(const std::string& sql) {
    std::vector<std::string> out;
    char quote = 0;
    for (std::size_t i = 0; i < sql.size(); ++i) {
        const char c = sql[i];
        if (quote) {
            if (c == quote) quote = 0;
        } else if (c == '\'' || c == '"') {
            quote = c;
        } else if (c == ':' && i + 1 < sql.size() && sql[i + 1] == ':') {
            ++i;
        } else if (c == ':' && i + 1 < sql.size() && ident_char(sql[i + 1])) {
            std::size_t e = i + 1;
            while (e < sql.size() && ident_char(sql[e])) ++e;
            out.push_back(sql.substr(i + 1, e - i - 1));
            i = e - 1;
        }
    }
    return out;
}

}  // namespace

std::vector<std::string> split_list(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::size_t b = 0;
    while (b < s.size()) {
        std::size_t e = s.find(sep, b);
        if (e == std::string::npos) e = s.size();
        if (e > b) out.push_back(s.substr(b, e - b));
        b = e + 1;
    }
    return out;
}

std::string join_list(const std::vector<std::string>& items, char sep) {
    std::string out;
    for (const std::string& s : items) {
        if (!out.empty()) out += sep;
        out += s;
    }
    return out;
}

std::string join_ids(const std::vector<long long>& ids) {
    std::string out;
    for (long long id : ids) out += (out.empty() ? "" : ", ") + std::to_string(id);
    return out;
}

const char* token_scope_name(TokenScope scope) {
    return scope == TokenScope::ReadOnly ? "read-only" : "read-write";
}

TokenScope token_scope(const std::string& name) {
    return name == "read-write" ? TokenScope::ReadWrite : TokenScope::ReadOnly;
}

const char* attachment_kind_name(AttachmentKind kind) {
    switch (kind) {
        case AttachmentKind::Image: return "image";
        case AttachmentKind::Audio: return "audio";
        case AttachmentKind::File: break;
    }
    return "file";
}

AttachmentKind attachment_kind(const std::string& name) {
    if (name == "image") return AttachmentKind::Image;
    if (name == "audio") return AttachmentKind::Audio;
    return AttachmentKind::File;
}

bool has_param(const std::string& sql, const std::string& name) {
    const std::string p = ":" + name;
    for (std::size_t i = sql.find(p); i != std::string::npos; i = sql.find(p, i + 1)) {
        const std::size_t e = i + p.size();
        if (e >= sql.size() || !ident_char(sql[e])) return true;
    }
    return false;
}

Prep& Prep::returning_id(const Dialect& d, long long& id) {
    if (d.insert_returns_id()) {
        sql_ += " RETURNING id";
        st_.exchange(soci::into(id));
    }
    return *this;
}

soci::statement Prep::done() {
    // An unbound placeholder would silently read as NULL on some backends.
    for (const std::string& name : placeholders(sql_))
        if (std::find(bound_.begin(), bound_.end(), name) == bound_.end())
            throw std::logic_error("unbound SQL placeholder :" + name);
    st_.alloc();
    st_.prepare(sql_);
    st_.define_and_bind();
    return st_;
}

bool fetch_one(soci::statement& st) {
    st.execute();
    if (!st.fetch()) {
        end_read(st);
        return false;
    }
    while (st.fetch()) {
    }
    end_read(st);
    return true;
}

void end_read(soci::statement& st) {
    // libsoci_sqlite3 exports no typeinfo, so dynamic_cast cannot link; the dynamic type's name
    // (Itanium-mangled below) comes from the vtable at run time and identifies SQLite as well.
    soci::details::statement_backend* b = st.get_backend();
    if (!b || std::strcmp(typeid(*b).name(), "N4soci25sqlite3_statement_backendE") != 0)
        return;
    auto* lite = static_cast<soci::sqlite3_statement_backend*>(b);
    if (lite->stmt_) sqlite3_reset(lite->stmt_);
}

namespace {

// INSERT of `rows` postings rows of user :u, bound to w.rows[0, rows).
soci::statement build_postings_insert(soci::session& s, PostingInserts& w, std::size_t rows) {
    std::string sql = "INSERT INTO postings (user_id, term, updated_us, uid_hi, uid_lo, note_id, "
                      "created_us, flags, tfs, lens, pos) VALUES ";
    for (std::size_t i = 0; i < rows; ++i) {
        const std::string n = std::to_string(i);
        sql += (i ? ", (:u, :t" : "(:u, :t") + n + ", :d" + n + ", :h" + n + ", :l" + n + ", :n" +
               n + ", :c" + n + ", :f" + n + ", :x" + n + ", :y" + n + ", :p" + n + ")";
    }
    Prep p(s, sql);
    p.in(w.user_id, "u");
    for (std::size_t i = 0; i < rows; ++i) {
        const std::string n = std::to_string(i);
        PostingRow& r = w.rows[i];
        p.in(r.term, ("t" + n).c_str()).in(r.updated_us, ("d" + n).c_str())
            .in(r.uid_hi, ("h" + n).c_str()).in(r.uid_lo, ("l" + n).c_str())
            .in(r.note_id, ("n" + n).c_str()).in(r.created_us, ("c" + n).c_str())
            .in(r.flags, ("f" + n).c_str()).in(r.tfs, ("x" + n).c_str())
            .in(r.lens, ("y" + n).c_str()).in(r.pos, ("p" + n).c_str());
    }
    return p.done();
}

// Upsert adding `rows` df changes of user :u, bound to w.df_terms / w.df_deltas [0, rows).
soci::statement build_df_upsert(soci::session& s, const Dialect& d, WriteStatements& w,
                                std::size_t rows) {
    std::string sql = "INSERT INTO term_df (user_id, term, df) VALUES ";
    for (std::size_t i = 0; i < rows; ++i) {
        const std::string n = std::to_string(i);
        sql += (i ? ", (:u, :t" : "(:u, :t") + n + ", :d" + n + ")";
    }
    Prep p(s, sql + d.df_upsert());
    p.in(w.user_id, "u");
    for (std::size_t i = 0; i < rows; ++i) {
        const std::string n = std::to_string(i);
        p.in(w.df_terms[i], ("t" + n).c_str()).in(w.df_deltas[i], ("d" + n).c_str());
    }
    return p.done();
}

// The terms :k0 .. of a df statement, for IN: ", :k1, :k2" after "(:k0".
std::string df_term_list(std::size_t rows) {
    std::string in = "(:k0";
    for (std::size_t i = 1; i < rows; ++i) in += ", :k" + std::to_string(i);
    return in + ")";
}

// Deletes the rows of the terms w.df_terms of user :u that no note has any more.
soci::statement build_df_drop_empty(soci::session& s, WriteStatements& w) {
    Prep p(s, "DELETE FROM term_df WHERE user_id = :u AND term IN " + df_term_list(kBatchRows) +
                  " AND df <= 0");
    p.in(w.user_id, "u");
    for (std::size_t i = 0; i < kBatchRows; ++i)
        p.in(w.df_terms[i], ("k" + std::to_string(i)).c_str());
    return p.done();
}

// A note's row; its text (note_text), links and attachments are rows of their own.
constexpr const char* kNoteInsertSql =
    "INSERT INTO notes (user_id, uuid, title, snippet, content, created_us, updated_us, flags, "
    "collection_uuids, audio_uuids, content_hash, title_len, body_len, version) VALUES (:u, "
    ":uuid, :title, :snippet, :content, :created, :updated, :flags, :colls, :audios, :hash, "
    ":tlen, :blen, :version)";
constexpr const char* kNoteUpdateSql =
    "UPDATE notes SET title = :title, snippet = :snippet, content = :content, created_us = "
    ":created, updated_us = :updated, flags = :flags, collection_uuids = :colls, audio_uuids = "
    ":audios, content_hash = :hash, title_len = :tlen, body_len = :blen, version = :version "
    "WHERE id = :id";

}  // namespace

WriteStatements::WriteStatements(soci::session& s, const Dialect& d)
    : lock_user(Prep(s, d.lock_user()).out(found_id).in(user_id, "u").done()),
      collection_find(Prep(s, "SELECT id, title, description, created_us, updated_us FROM collections "
                        "WHERE user_id = :u AND uuid = :uuid")
                    .out(found_id).out(found_title).out(found_description, found_description_ind).out(found_created_us)
                    .out(found_updated_us).in(user_id, "u").in(collection_uuid, "uuid").done()),
      collection_insert(Prep(s, "INSERT INTO collections (user_id, uuid, title, description, "
                          "created_us, updated_us, note_count) VALUES (:u, :uuid, :title, "
                          ":description, :created, :updated, 0)")
                      .in(user_id, "u").in(collection_uuid, "uuid").in(title, "title")
                      .in(description, description_ind, "description").in(created_us, "created")
                      .in(updated_us, "updated").returning_id(d, inserted_id).done()),
      collection_update(Prep(s, "UPDATE collections SET title = :title, description = :description, "
                          "created_us = :created, updated_us = :updated WHERE id = :id")
                      .in(title, "title").in(description, description_ind, "description")
                      .in(created_us, "created").in(updated_us, "updated").in(row_id, "id").done()),
      note_find(Prep(s, "SELECT id, content_hash, version, created_us, updated_us, flags FROM "
                        "notes WHERE user_id = :u AND uuid = :uuid")
                    .out(found_id).out(found_hash).out(found_version).out(found_created_us)
                    .out(found_updated_us).out(found_flags).in(user_id, "u")
                    .in(note_uuid, "uuid").done()),
      note_links(Prep(s, "SELECT collection_id FROM note_collections WHERE note_id = :id")
                     .out(linked_collection_id).in(row_id, "id").done()),
      note_insert(Prep(s, kNoteInsertSql)
                      .in(user_id, "u").in(note_uuid, "uuid").in(title, "title").in(snippet, "snippet")
                      .in(content, "content").in(created_us, "created").in(updated_us, "updated")
                      .in(flags, "flags").in(collection_uuids, "colls").in(audio_uuids, "audios")
                      .in(content_hash, "hash").in(title_len, "tlen").in(body_len, "blen")
                      .in(version, "version").returning_id(d, inserted_id).done()),
      note_update(Prep(s, kNoteUpdateSql)
                      .in(title, "title").in(snippet, "snippet").in(content, "content")
                      .in(created_us, "created").in(updated_us, "updated").in(flags, "flags")
                      .in(collection_uuids, "colls").in(audio_uuids, "audios").in(content_hash, "hash")
                      .in(title_len, "tlen").in(body_len, "blen").in(version, "version")
                      .in(row_id, "id").done()),
      text_insert(Prep(s, "INSERT INTO note_text (note_id, user_id, plain_text) VALUES (:id, :u, "
                          ":plain)")
                      .in(row_id, "id").in(user_id, "u").in(plain_text, "plain").done()),
      text_update(Prep(s, "UPDATE note_text SET plain_text = :plain WHERE note_id = :id")
                      .in(plain_text, "plain").in(row_id, "id").done()),
      text_delete(Prep(s, "DELETE FROM note_text WHERE note_id = :id").in(row_id, "id").done()),
      links_delete(Prep(s, "DELETE FROM note_collections WHERE note_id = :id").in(row_id, "id").done()),
      link_insert(Prep(s, "INSERT INTO note_collections (collection_id, note_id, note_uuid, "
                          "created_us, updated_us, flags) VALUES (:cid, :id, :uuid, :created, "
                          ":updated, :flags)")
                      .in(collection_id, "cid").in(row_id, "id").in(note_uuid, "uuid").in(created_us, "created")
                      .in(updated_us, "updated").in(flags, "flags").done()),
      attachments_delete(Prep(s, "DELETE FROM attachments WHERE note_id = :id").in(row_id, "id").done()),
      attachment_insert(Prep(s, "INSERT INTO attachments (note_id, uuid, kind, target) VALUES "
                         "(:id, :auuid, :kind, :target)")
                     .in(row_id, "id").in(attachment_uuid, "auuid").in(kind, "kind").in(target, "target")
                     .done()),
      collection_count_add(Prep(s, "UPDATE collections SET note_count = note_count + :delta WHERE id = :cid")
                    .in(note_count_delta, "delta").in(collection_id, "cid").done()),
      user_counts_add(Prep(s, "UPDATE users SET note_count = note_count + :dn, collection_count = "
                        "collection_count + :dc, title_tokens = title_tokens + :dtt, "
                        "body_tokens = body_tokens + :dbt WHERE id = :u")
                    .in(notes_delta, "dn").in(collections_delta, "dc").in(title_tokens_delta, "dtt").in(body_tokens_delta, "dbt").in(user_id, "u").done()),
      note_delete(Prep(s, "DELETE FROM notes WHERE id = :id").in(row_id, "id").done()),
      note_stored_index(Prep(s, "SELECT n.title, n.content, t.plain_text, n.title_len, n.body_len, "
                             "n.created_us, n.updated_us, n.flags FROM notes n JOIN note_text t "
                             "ON t.note_id = n.id WHERE n.id = :id")
                         .out(old_title).out(old_content).out(old_plain_text).out(old_title_len)
                         .out(old_body_len).out(old_created_us).out(old_updated_us).out(old_flags)
                         .in(row_id, "id").done()),
      posting_delete(Prep(s, "DELETE FROM postings WHERE user_id = :u AND term = :term AND "
                             "updated_us = :updated AND uid_hi = :hi AND uid_lo = :lo")
                         .in(user_id, "u").in(term, "term").in(posting_updated_us, "updated").in(posting_uid_hi, "hi")
                         .in(posting_uid_lo, "lo").done()),
      df_upserts{build_df_upsert(s, d, *this, kDfUpsertRows[0]),
                 build_df_upsert(s, d, *this, kDfUpsertRows[1]),
                 build_df_upsert(s, d, *this, kDfUpsertRows[2]),
                 build_df_upsert(s, d, *this, kDfUpsertRows[3]),
                 build_df_upsert(s, d, *this, kDfUpsertRows[4]),
                 build_df_upsert(s, d, *this, kDfUpsertRows[5])},
      df_drop_empty(build_df_drop_empty(s, *this)),
      postings(s) {}

PostingInserts::PostingInserts(soci::session& s)
    : one(build_postings_insert(s, *this, 1)), many(build_postings_insert(s, *this, kBatchRows)) {}

}  // namespace detail
}  // namespace notesd
