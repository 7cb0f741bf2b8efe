// The SQL of the SOCI store (common to every backend; the differences come from Dialect) and
// the statement cache built from it.
#include "store/soci_stmt.hpp"

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

// The FROM/WHERE of a note list or count. Inside a collection, note_collections' copies of
// the sort keys and flags drive the range scan; a count does not even join the notes.
std::string note_from_where(const Dialect& d, OrderBy o, bool in_collection, bool keyset,
                            bool join_notes) {
    const std::string t = in_collection ? "nc" : "n";
    // a page reads its sort index (Dialect::force_index); a count may take any
    const std::string hint =
        keyset ? d.force_index(o == OrderBy::UpdatedAt ? "notes_by_updated" : "notes_by_created") : "";
    std::string w = !in_collection ? " FROM notes n" + hint + " WHERE n.user_id = :u"
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

void bind_note_params(Prep& p, NoteParams& np) {
    p.in(np.u, "u").in(np.coll, "coll").in(np.k, "k").in(np.k2, "k2").in(np.kid, "kid")
        .in(np.cmin, "cmin").in(np.cmax, "cmax").in(np.umin, "umin").in(np.umax, "umax")
        .in(np.mask, "mask").in(np.mask2, "mask2").in(np.lim, "lim");
}

std::string coll_where(const Dialect& d, OrderBy o, bool keyset) {
    std::string w = " FROM collections WHERE user_id = :u";
    if (keyset)
        w += " AND " + d.keyset_before(o == OrderBy::UpdatedAt ? "updated_us" : "created_us",
                                       "uuid");
    return w + " AND created_us >= :cmin AND created_us <= :cmax AND updated_us >= :umin AND "
               "updated_us <= :umax";
}

void bind_coll_params(Prep& p, CollParams& cp) {
    p.in(cp.u, "u").in(cp.k, "k").in(cp.k2, "k2").in(cp.kid, "kid").in(cp.cmin, "cmin")
        .in(cp.cmax, "cmax").in(cp.umin, "umin").in(cp.umax, "umax").in(cp.lim, "lim");
}

}  // namespace

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

ReadStmts::ReadStmts(soci::session& s_, const Dialect& d_)
    : s(s_), d(d_),
      find_token(Prep(s, "SELECT user_id, id FROM tokens WHERE token_hash = :h AND "
                         "revoked_us IS NULL")
                     .out(tok_user).out(tok_id).in(token_hash, "h").done()),
      find_coll(Prep(s, "SELECT id, note_count FROM collections WHERE user_id = :u AND "
                        "uuid = :uuid")
                    .out(cid).out(ccount).in(u, "u").in(cuuid, "uuid").done()),
      user_counts(Prep(s, "SELECT note_count, collection_count FROM users WHERE id = :u")
                      .out(user_notes).out(user_colls).in(u, "u").done()) {}

soci::statement& ReadStmts::note_list(OrderBy o, bool in_collection, bool with_content) {
    const int key = (o == OrderBy::UpdatedAt ? 1 : 0) | (in_collection ? 2 : 0) |
                    (with_content ? 4 : 0);
    auto it = variants.find(key);
    if (it != variants.end()) return it->second;
    const std::string t = in_collection ? "nc" : "n";
    const std::string sort = t + (o == OrderBy::UpdatedAt ? ".updated_us" : ".created_us");
    const std::string id = in_collection ? "nc.note_uuid" : "n.uuid";
    const std::string sql = std::string("SELECT n.uuid, n.title, n.snippet, ") +
                            (with_content ? "n.content, " : "") +
                            "n.created_us, n.updated_us, n.collection_uuids, n.audio_uuids" +
                            note_from_where(d, o, in_collection, true, true) + " ORDER BY " + sort +
                            " DESC, " + id + " DESC" + d.limit_clause();
    Prep p(s, sql);
    p.out(nr.uuid).out(nr.title).out(nr.snippet);
    if (with_content) p.out(nr.content);
    p.out(nr.created).out(nr.updated).out(nr.colls).out(nr.audios);
    bind_note_params(p, np);
    return variants.emplace(key, p.done()).first->second;
}

soci::statement& ReadStmts::note_count(bool in_collection) {
    const int key = 8 | (in_collection ? 2 : 0);
    auto it = variants.find(key);
    if (it != variants.end()) return it->second;
    Prep p(s, "SELECT " + d.count_star() +
                  note_from_where(d, OrderBy::UpdatedAt, in_collection, false, false));
    p.out(count);
    bind_note_params(p, np);
    return variants.emplace(key, p.done()).first->second;
}

soci::statement& ReadStmts::coll_list(OrderBy o) {
    const int key = 16 | (o == OrderBy::UpdatedAt ? 1 : 0);
    auto it = variants.find(key);
    if (it != variants.end()) return it->second;
    const std::string sort = o == OrderBy::UpdatedAt ? "updated_us" : "created_us";
    Prep p(s, "SELECT uuid, title, description, created_us, updated_us, note_count" +
                  coll_where(d, o, true) + " ORDER BY " + sort + " DESC, uuid DESC" +
                  d.limit_clause());
    p.out(cr.uuid).out(cr.title).out(cr.description, cr.desc_ind).out(cr.created)
        .out(cr.updated).out(cr.count);
    bind_coll_params(p, cp);
    return variants.emplace(key, p.done()).first->second;
}

soci::statement& ReadStmts::coll_count() {
    const int key = 32;
    auto it = variants.find(key);
    if (it != variants.end()) return it->second;
    Prep p(s, "SELECT " + d.count_star() + coll_where(d, OrderBy::UpdatedAt, false));
    p.out(count);
    bind_coll_params(p, cp);
    return variants.emplace(key, p.done()).first->second;
}

namespace {

// INSERT of `rows` postings rows of user :u, bound to w.rows[0, rows).
soci::statement build_postings_insert(soci::session& s, WriteStmts& w, std::size_t rows) {
    std::string sql = "INSERT INTO postings (user_id, term, updated_us, uid_hi, uid_lo, note_id, "
                      "created_us, flags, tfs, lens, pos) VALUES ";
    for (std::size_t i = 0; i < rows; ++i) {
        const std::string n = std::to_string(i);
        sql += (i ? ", (:u, :t" : "(:u, :t") + n + ", :d" + n + ", :h" + n + ", :l" + n + ", :n" +
               n + ", :c" + n + ", :f" + n + ", :x" + n + ", :y" + n + ", :p" + n + ")";
    }
    Prep p(s, sql);
    p.in(w.u, "u");
    for (std::size_t i = 0; i < rows; ++i) {
        const std::string n = std::to_string(i);
        PostingRow& r = w.rows[i];
        p.in(r.term, ("t" + n).c_str()).in(r.updated, ("d" + n).c_str())
            .in(r.hi, ("h" + n).c_str()).in(r.lo, ("l" + n).c_str())
            .in(r.note, ("n" + n).c_str()).in(r.created, ("c" + n).c_str())
            .in(r.flags, ("f" + n).c_str()).in(r.tfs, ("x" + n).c_str())
            .in(r.lens, ("y" + n).c_str()).in(r.pos, ("p" + n).c_str());
    }
    return p.done();
}

// Upsert adding `rows` df increases of user :u, bound to w.df_terms / w.df_deltas [0, rows).
soci::statement build_df_upsert(soci::session& s, const Dialect& d, WriteStmts& w,
                                std::size_t rows) {
    std::string sql = "INSERT INTO term_df (user_id, term, df) VALUES ";
    for (std::size_t i = 0; i < rows; ++i) {
        const std::string n = std::to_string(i);
        sql += (i ? ", (:u, :t" : "(:u, :t") + n + ", :d" + n + ")";
    }
    Prep p(s, sql + d.df_upsert());
    p.in(w.u, "u");
    for (std::size_t i = 0; i < rows; ++i) {
        const std::string n = std::to_string(i);
        p.in(w.df_terms[i], ("t" + n).c_str()).in(w.df_deltas[i], ("d" + n).c_str());
    }
    return p.done();
}

}  // namespace

WriteStmts::WriteStmts(soci::session& s, const Dialect& d)
    : lock_user(Prep(s, d.lock_user()).out(o_id).in(u, "u").done()),
      coll_find(Prep(s, "SELECT id, title, description, created_us, updated_us FROM collections "
                        "WHERE user_id = :u AND uuid = :uuid")
                    .out(o_id).out(o_title).out(o_desc, o_desc_ind).out(o_created)
                    .out(o_updated).in(u, "u").in(cuuid, "uuid").done()),
      coll_insert(Prep(s, "INSERT INTO collections (user_id, uuid, title, description, "
                          "created_us, updated_us, note_count) VALUES (:u, :uuid, :title, "
                          ":description, :created, :updated, 0)")
                      .in(u, "u").in(cuuid, "uuid").in(title, "title")
                      .in(description, desc_ind, "description").in(created, "created")
                      .in(updated, "updated").returning_id(d, new_id).done()),
      coll_update(Prep(s, "UPDATE collections SET title = :title, description = :description, "
                          "created_us = :created, updated_us = :updated WHERE id = :id")
                      .in(title, "title").in(description, desc_ind, "description")
                      .in(created, "created").in(updated, "updated").in(id, "id").done()),
      note_find(Prep(s, "SELECT id, content_hash FROM notes WHERE user_id = :u AND uuid = :uuid")
                    .out(o_id).out(o_hash).in(u, "u").in(uuid, "uuid").done()),
      note_links(Prep(s, "SELECT collection_id FROM note_collections WHERE note_id = :id")
                     .out(link).in(id, "id").done()),
      note_insert(Prep(s, "INSERT INTO notes (user_id, uuid, title, snippet, content, created_us, "
                          "updated_us, flags, collection_uuids, audio_uuids, content_hash, "
                          "title_len, body_len) VALUES (:u, :uuid, :title, :snippet, :content, "
                          ":created, :updated, :flags, :colls, :audios, :hash, :tlen, :blen)")
                      .in(u, "u").in(uuid, "uuid").in(title, "title").in(snippet, "snippet")
                      .in(content, "content").in(created, "created").in(updated, "updated")
                      .in(flags, "flags").in(colls, "colls").in(audios, "audios")
                      .in(hash, "hash").in(title_len, "tlen").in(body_len, "blen")
                      .returning_id(d, new_id).done()),
      note_update(Prep(s, "UPDATE notes SET title = :title, snippet = :snippet, content = "
                          ":content, created_us = :created, updated_us = :updated, flags = "
                          ":flags, collection_uuids = :colls, audio_uuids = :audios, "
                          "content_hash = :hash, title_len = :tlen, body_len = :blen WHERE id = :id")
                      .in(title, "title").in(snippet, "snippet").in(content, "content")
                      .in(created, "created").in(updated, "updated").in(flags, "flags")
                      .in(colls, "colls").in(audios, "audios").in(hash, "hash")
                      .in(title_len, "tlen").in(body_len, "blen").in(id, "id").done()),
      text_insert(Prep(s, "INSERT INTO note_text (note_id, user_id, title_terms, body_terms, "
                          "plain_text) VALUES (:id, :u, :tterms, :bterms, :plain)")
                      .in(id, "id").in(u, "u").in(title_terms, "tterms").in(body_terms, "bterms")
                      .in(plain_text, "plain").done()),
      text_update(Prep(s, "UPDATE note_text SET title_terms = :tterms, body_terms = :bterms, "
                          "plain_text = :plain WHERE note_id = :id")
                      .in(title_terms, "tterms").in(body_terms, "bterms").in(plain_text, "plain")
                      .in(id, "id").done()),
      text_delete(Prep(s, "DELETE FROM note_text WHERE note_id = :id").in(id, "id").done()),
      links_delete(Prep(s, "DELETE FROM note_collections WHERE note_id = :id").in(id, "id").done()),
      link_insert(Prep(s, "INSERT INTO note_collections (collection_id, note_id, note_uuid, "
                          "created_us, updated_us, flags) VALUES (:cid, :id, :uuid, :created, "
                          ":updated, :flags)")
                      .in(cid, "cid").in(id, "id").in(uuid, "uuid").in(created, "created")
                      .in(updated, "updated").in(flags, "flags").done()),
      att_delete(Prep(s, "DELETE FROM attachments WHERE note_id = :id").in(id, "id").done()),
      att_insert(Prep(s, "INSERT INTO attachments (note_id, uuid, kind, target) VALUES "
                         "(:id, :auuid, :kind, :target)")
                     .in(id, "id").in(auuid, "auuid").in(kind, "kind").in(target, "target")
                     .done()),
      coll_bump(Prep(s, "UPDATE collections SET note_count = note_count + :delta WHERE id = :cid")
                    .in(delta, "delta").in(cid, "cid").done()),
      user_bump(Prep(s, "UPDATE users SET note_count = note_count + :dn, collection_count = "
                        "collection_count + :dc, title_tokens = title_tokens + :dtt, "
                        "body_tokens = body_tokens + :dbt WHERE id = :u")
                    .in(dn, "dn").in(dc, "dc").in(dtt, "dtt").in(dbt, "dbt").in(u, "u").done()),
      note_delete(Prep(s, "DELETE FROM notes WHERE id = :id").in(id, "id").done()),
      note_old_index(Prep(s, "SELECT t.title_terms, t.body_terms, n.title_len, n.body_len, "
                             "n.created_us, n.updated_us, n.flags FROM notes n JOIN note_text t "
                             "ON t.note_id = n.id WHERE n.id = :id")
                         .out(on_title_terms).out(on_body_terms).out(on_title_len)
                         .out(on_body_len).out(on_created).out(on_updated).out(on_flags)
                         .in(id, "id").done()),
      posting_insert(build_postings_insert(s, *this, 1)),
      posting_delete(Prep(s, "DELETE FROM postings WHERE user_id = :u AND term = :term AND "
                             "updated_us = :updated AND uid_hi = :hi AND uid_lo = :lo")
                         .in(u, "u").in(p_term, "term").in(p_updated, "updated").in(p_hi, "hi")
                         .in(p_lo, "lo").done()),
      df_add(Prep(s, "UPDATE term_df SET df = df + :delta WHERE user_id = :u AND term = :term")
                 .in(df_delta, "delta").in(u, "u").in(p_term, "term").done()),
      df_upsert_one(build_df_upsert(s, d, *this, 1)),
      df_drop(Prep(s, "DELETE FROM term_df WHERE user_id = :u AND term = :term AND df = :gone")
                  .in(u, "u").in(p_term, "term").in(df_gone, "gone").done()),
      postings_insert_many(build_postings_insert(s, *this, kBatchRows)),
      df_upsert_many(build_df_upsert(s, d, *this, kBatchRows)) {}

}  // namespace detail
}  // namespace notesd
