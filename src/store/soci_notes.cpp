// SociStore's note roles of the write API (NoteEditor, NoteTrash) and the note delete. Every
// change goes through the import's write path (write_note_locked / remove_note_locked in
// soci_write.cpp), so the note, its links, attachments, counts and search index (through the
// index strategy's hooks) change together in one transaction. A trashed note leaves the live
// tables the way a delete does and waits in trashed_notes with everything a restore needs
// (schema 008), so no list, count or search path has to skip it.
#include "store/soci_notes.hpp"

#include <algorithm>
#include <stdexcept>

#include "base/util.hpp"
#include "store/plain_text_codec.hpp"
#include "store/soci_stmt.hpp"
#include "store/soci_store.hpp"

namespace notesd {
namespace detail {
namespace {

constexpr const char* kTrashedInsertSql =
    "INSERT INTO trashed_notes (user_id, uuid, trashed_us, version, title, snippet, content, "
    "created_us, updated_us, flags, collection_uuids, attachments, plain_text) VALUES (:u, :uuid, "
    ":trashed, :version, :title, :snippet, :content, :created, :updated, :flags, :colls, :atts, "
    ":plain)";

// A trashed note's attachments as length-prefixed fields ("36:<uuid>5:image9:<target>"...): a
// target is whatever the markdown said, so no separator character is safe.
void put_field(std::string& s, const std::string& v) {
    s += std::to_string(v.size());
    s += ':';
    s += v;
}

bool take_field(const std::string& s, std::size_t& at, std::string& out) {
    const std::size_t colon = s.find(':', at);
    if (colon == std::string::npos || colon == at || colon - at > 9) return false;
    std::size_t n = 0;
    for (std::size_t i = at; i < colon; ++i) {
        if (s[i] < '0' || s[i] > '9') return false;
        n = n * 10 + static_cast<std::size_t>(s[i] - '0');
    }
    if (n > s.size() - colon - 1) return false;
    out = s.substr(colon + 1, n);
    at = colon + 1 + n;
    return true;
}

std::string encode_attachments(const std::vector<Attachment>& atts) {
    std::string s;
    for (const Attachment& a : atts) {
        put_field(s, a.id);
        put_field(s, attachment_kind_name(a.kind));
        put_field(s, a.target);
    }
    return s;
}

std::vector<Attachment> decode_attachments(const std::string& s) {
    std::vector<Attachment> out;
    std::size_t at = 0;
    while (at < s.size()) {
        Attachment a;
        std::string kind;
        if (!take_field(s, at, a.id) || !take_field(s, at, kind) || !take_field(s, at, a.target))
            throw std::runtime_error("a trashed note's attachment list is damaged");
        a.kind = attachment_kind(kind);
        out.push_back(std::move(a));
    }
    return out;
}

// The write path's input from the columns a read left in `r`.
NoteInput input_of(const StoredNoteRow& r, const std::string& uuid) {
    NoteInput n;
    n.id = uuid;
    n.title = r.title;
    n.snippet = r.snippet;
    n.content = r.content;
    n.created_us = r.created_us;
    n.updated_us = r.updated_us;
    n.flags = static_cast<int>(r.flags);
    n.collection_ids = split_list(r.collection_uuids, ',');
    n.plain_text = decode_plain_text(r.content, r.plain_text);
    return n;
}

}  // namespace

NoteStatements::NoteStatements(soci::session& s)
    : live_note(Prep(s, "SELECT id, version, title, snippet, content, created_us, updated_us, "
                        "flags, collection_uuids FROM notes WHERE "
                        "user_id = :u AND uuid = :uuid")
                    .out(row.row_id).out(row.version).out(row.title).out(row.snippet)
                    .out(row.content).out(row.created_us).out(row.updated_us).out(row.flags)
                    .out(row.collection_uuids)
                    .in(user_id, "u").in(note_uuid, "uuid").done()),
      live_note_text(Prep(s, "SELECT plain_text FROM note_text WHERE note_id = :id")
                         .out(row.plain_text)
                         .in(row.row_id, "id").done()),
      stored_text(Prep(s, "SELECT n.title, n.content, t.plain_text FROM notes n JOIN note_text t ON "
                          "t.note_id = n.id WHERE n.user_id = :u AND n.uuid = :uuid AND NOT EXISTS "
                          "(SELECT 1 FROM index_pending p WHERE p.user_id = :pu AND "
                          "p.uid_hi = :hi AND p.uid_lo = :lo)")
                      .out(row.title).out(row.content).out(row.plain_text)
                      .in(user_id, "u").in(note_uuid, "uuid").in(user_id, "pu").in(uid_hi, "hi")
                      .in(uid_lo, "lo").done()),
      live_attachments(Prep(s, "SELECT uuid, kind, target FROM attachments WHERE note_id = :id "
                               "ORDER BY id")
                           .out(attachment_uuid).out(attachment_kind).out(attachment_target)
                           .in(row.row_id, "id").done()),
      trashed_note(Prep(s, "SELECT trashed_us, version, title, snippet, content, created_us, "
                           "updated_us, flags, collection_uuids, attachments, plain_text FROM "
                           "trashed_notes WHERE user_id = :u AND uuid = :uuid")
                       .out(row.trashed_us).out(row.version).out(row.title).out(row.snippet)
                       .out(row.content).out(row.created_us).out(row.updated_us).out(row.flags)
                       .out(row.collection_uuids).out(row.attachments)
                       .out(row.plain_text).in(user_id, "u").in(note_uuid, "uuid").done()),
      trashed_exists(Prep(s, "SELECT trashed_us FROM trashed_notes WHERE user_id = :u AND "
                             "uuid = :uuid")
                         .out(row.trashed_us).in(user_id, "u").in(note_uuid, "uuid").done()),
      trashed_insert(Prep(s, kTrashedInsertSql)
                         .in(user_id, "u").in(note_uuid, "uuid").in(row.trashed_us, "trashed")
                         .in(row.version, "version").in(row.title, "title")
                         .in(row.snippet, "snippet").in(row.content, "content")
                         .in(row.created_us, "created").in(row.updated_us, "updated")
                         .in(row.flags, "flags").in(row.collection_uuids, "colls")
                         .in(row.attachments, "atts").in(row.plain_text, "plain").done()),
      trashed_delete(Prep(s, "DELETE FROM trashed_notes WHERE user_id = :u AND uuid = :uuid")
                         .in(user_id, "u").in(note_uuid, "uuid").done()),
      trashed_ids(Prep(s, "SELECT uuid FROM trashed_notes WHERE user_id = :u ORDER BY "
                          "updated_us DESC, uuid DESC")
                      .out(trashed_uuid).in(user_id, "u").done()),
      collection_titles(Prep(s, "SELECT uuid, title FROM collections WHERE user_id = :u ORDER "
                                "BY uuid")
                            .out(collection_uuid).out(collection_title).in(user_id, "u").done()) {}

std::optional<NoteState> load_live_note(NoteStatements& s, long long user_id,
                                        const std::string& uuid) {
    s.user_id = user_id;
    s.note_uuid = uuid;
    if (!fetch_one(s.live_note)) return std::nullopt;
    if (!fetch_one(s.live_note_text)) throw std::runtime_error("a note has no index text");
    NoteState n;
    n.version = s.row.version;
    n.input = input_of(s.row, uuid);
    s.live_attachments.execute();
    while (s.live_attachments.fetch())
        n.input.attachments.push_back(
            Attachment{s.attachment_uuid, attachment_kind(s.attachment_kind), s.attachment_target});
    end_read(s.live_attachments);
    return n;
}

std::optional<NoteState> load_trashed_note(NoteStatements& s, long long user_id,
                                           const std::string& uuid) {
    s.user_id = user_id;
    s.note_uuid = uuid;
    if (!fetch_one(s.trashed_note)) return std::nullopt;
    NoteState n;
    n.version = s.row.version;
    n.trashed_us = s.row.trashed_us;
    n.input = input_of(s.row, uuid);
    n.input.attachments = decode_attachments(s.row.attachments);
    return n;
}

void insert_trashed_note(NoteStatements& s, long long user_id, const NoteState& n) {
    const NoteInput& in = n.input;
    StoredNoteRow& r = s.row;
    s.user_id = user_id;
    s.note_uuid = in.id;
    r.trashed_us = n.trashed_us.value_or(0);
    r.version = n.version;
    r.title = in.title;
    r.snippet = in.snippet;
    r.content = in.content;
    r.created_us = in.created_us;
    r.updated_us = in.updated_us;
    r.flags = in.flags;
    r.collection_uuids = join_list(in.collection_ids, ',');
    r.attachments = encode_attachments(in.attachments);
    r.plain_text = encode_plain_text(in.content, in.plain_text);
    exec(s.trashed_insert);
}

}  // namespace detail

namespace {

using detail::exec;
using detail::fetch_one;

NoteRecord to_record(const detail::NoteState& n) {
    NoteRecord r;
    r.id = n.input.id;
    r.title = n.input.title;
    r.content = n.input.content;
    r.version = n.version;
    r.created_us = n.input.created_us;
    r.updated_us = n.input.updated_us;
    r.trashed_us = n.trashed_us;
    r.collection_ids = n.input.collection_ids;
    for (const Attachment& a : n.input.attachments)
        if (a.kind == AttachmentKind::Audio) r.audio_recording_ids.push_back(a.id);
    r.attachments = n.input.attachments;
    return r;
}

NoteWriteResult result(NoteWriteStatus status, const detail::NoteState* n = nullptr) {
    NoteWriteResult r;
    r.status = status;
    if (n) r.note = to_record(*n);
    return r;
}

}  // namespace

detail::NoteStatements& SociStore::note_statements() {
    if (!notes_) notes_ = std::make_unique<detail::NoteStatements>(sql_);
    return *notes_;
}

std::vector<std::string> SociStore::existing_collections(long long user_id,
                                                         const std::vector<std::string>& uuids) {
    std::vector<std::string> out;
    for (const std::string& c : uuids) {
        const std::optional<std::string> id = parse_uuid(c);
        if (id && std::find(out.begin(), out.end(), *id) == out.end() &&
            collection_row_id(user_id, *id, nullptr) != 0)
            out.push_back(*id);
    }
    return out;
}

std::optional<detail::NoteState> SociStore::live_note(long long user_id, const std::string& uuid) {
    std::optional<detail::NoteState> n = detail::load_live_note(note_statements(), user_id, uuid);
    if (n) n->input.collection_ids = existing_collections(user_id, n->input.collection_ids);
    return n;
}

std::optional<detail::NoteState> SociStore::trashed_note(long long user_id,
                                                         const std::string& uuid) {
    std::optional<detail::NoteState> n = detail::load_trashed_note(note_statements(), user_id, uuid);
    if (n) n->input.collection_ids = existing_collections(user_id, n->input.collection_ids);
    return n;
}

bool SociStore::is_trashed(long long user_id, const std::string& uuid) {
    detail::NoteStatements& s = note_statements();
    s.user_id = user_id;
    s.note_uuid = uuid;
    return fetch_one(s.trashed_exists);
}

std::optional<NoteRecord> SociStore::find_note(long long user_id, const std::string& note_id) {
    const std::optional<std::string> id = parse_uuid(note_id);
    if (!id) return std::nullopt;
    return reading("find_note", [&]() -> std::optional<NoteRecord> {
        ReadScope view(*this);  // the note, its text, attachments and links of one state
        if (auto n = live_note(user_id, *id)) return to_record(*n);
        if (auto n = trashed_note(user_id, *id)) return to_record(*n);
        return std::nullopt;
    });
}

std::vector<std::pair<std::string, std::string>> SociStore::collection_titles(long long user_id) {
    return reading("collection_titles", [&] {
        std::vector<std::pair<std::string, std::string>> out;
        detail::NoteStatements& s = note_statements();
        s.user_id = user_id;
        s.collection_titles.execute();
        while (s.collection_titles.fetch()) out.emplace_back(s.collection_uuid, s.collection_title);
        detail::end_read(s.collection_titles);
        return out;
    });
}

NoteWriteResult SociStore::create_note(long long user_id, const NoteInput& n) {
    const std::optional<std::string> id = parse_uuid(n.id);
    if (!id) throw std::invalid_argument("invalid note id");
    // The analysis needs no database: done before the write lock, beside other writes.
    detail::AnalysedNote analysed = detail::analyse_note(n.title, n.plain_text);
    return locked_write("create_note", user_id, [&] {
        detail::WriteStatements& w = writes();
        w.user_id = user_id;
        w.note_uuid = *id;
        if (fetch_one(w.note_find) || is_trashed(user_id, *id))
            return result(NoteWriteStatus::IdTaken);
        detail::NoteState created;
        created.input = n;
        created.input.id = *id;
        created.input.collection_ids = existing_collections(user_id, n.collection_ids);
        write_note_locked(user_id, created.input, 1, std::move(analysed));
        return result(NoteWriteStatus::Done, &created);
    });
}

// An update or delete removes the stored version's terms from the document frequencies; for a
// note in a segment they are counted from its stored text, which is the longest step of such a
// write. Like the new version's analysis it needs no lock: both are done before it, and the
// write checks that the stored text is still the one counted.
std::optional<detail::StoredTerms> SociStore::stored_terms(long long user_id, const std::string& uuid) {
    return reading("stored_terms", [&]() -> std::optional<detail::StoredTerms> {
        detail::NoteStatements& s = note_statements();
        s.user_id = user_id;
        s.note_uuid = uuid;
        detail::uuid_halves(uuid, s.uid_hi, s.uid_lo);
        if (!fetch_one(s.stored_text)) return std::nullopt;
        detail::StoredTerms t;
        t.title = s.row.title;
        t.plain_text = detail::decode_plain_text(s.row.content, s.row.plain_text);
        t.terms = detail::count_stored_terms(t.title, t.plain_text);
        return t;
    });
}

NoteWriteResult SociStore::update_note(long long user_id, const NoteInput& n,
                                       long long expected_version) {
    const std::optional<std::string> id = parse_uuid(n.id);
    if (!id) return result(NoteWriteStatus::NotFound);
    detail::AnalysedNote analysed = detail::analyse_note(n.title, n.plain_text);  // as create_note
    const std::optional<detail::StoredTerms> before = stored_terms(user_id, *id);
    return locked_write("update_note", user_id, [&] {
        std::optional<detail::NoteState> cur = live_note(user_id, *id);
        if (!cur)
            return result(is_trashed(user_id, *id) ? NoteWriteStatus::Trashed
                                                   : NoteWriteStatus::NotFound);
        if (cur->version != expected_version) return result(NoteWriteStatus::VersionConflict, &*cur);
        if (n.updated_us < cur->input.created_us)
            return result(NoteWriteStatus::UpdatedBeforeCreated, &*cur);
        detail::NoteState updated;
        updated.input = n;
        updated.input.id = *id;
        updated.input.created_us = cur->input.created_us;
        updated.input.collection_ids = cur->input.collection_ids;
        updated.version = expected_version + 1;
        write_note_locked(user_id, updated.input, updated.version, std::move(analysed),
                          before ? &*before : nullptr);
        return result(NoteWriteStatus::Done, &updated);
    });
}

NoteWriteResult SociStore::set_note_created(long long user_id, const std::string& note_id,
                                            long long created_us) {
    const std::optional<std::string> id = parse_uuid(note_id);
    if (!id) return result(NoteWriteStatus::NotFound);
    return locked_write("set_note_created", user_id, [&] {
        std::optional<detail::NoteState> cur = live_note(user_id, *id);
        if (!cur)
            return result(is_trashed(user_id, *id) ? NoteWriteStatus::Trashed
                                                   : NoteWriteStatus::NotFound);
        if (created_us >= cur->input.created_us) return result(NoteWriteStatus::NotEarlier, &*cur);
        cur->input.created_us = created_us;
        // The postings and links carry created_us for the filters: the write path moves them.
        write_note_locked(user_id, cur->input, cur->version);
        return result(NoteWriteStatus::Done, &*cur);
    });
}

bool SociStore::trash_note(long long user_id, const std::string& note_id, long long now_us) {
    const std::optional<std::string> id = parse_uuid(note_id);
    if (!id) return false;
    const std::optional<detail::StoredTerms> before = stored_terms(user_id, *id);
    return locked_write("trash_note", user_id, [&] {
        std::optional<detail::NoteState> cur = live_note(user_id, *id);
        if (!cur) return is_trashed(user_id, *id);  // trashing twice: no change
        cur->trashed_us = now_us;
        detail::insert_trashed_note(note_statements(), user_id, *cur);
        if (!remove_note_locked(user_id, *id, before ? &*before : nullptr))
            throw std::runtime_error("note vanished while trashing");
        return true;
    });
}

bool SociStore::restore_note(long long user_id, const std::string& note_id) {
    const std::optional<std::string> id = parse_uuid(note_id);
    if (!id) return false;
    return locked_write("restore_note", user_id, [&] {
        std::optional<detail::NoteState> t = trashed_note(user_id, *id);
        if (!t) return live_note(user_id, *id).has_value();  // restoring a live note: no change
        write_note_locked(user_id, t->input, t->version);
        detail::NoteStatements& s = note_statements();
        s.user_id = user_id;
        s.note_uuid = *id;
        exec(s.trashed_delete);
        return true;
    });
}

std::vector<std::string> SociStore::trashed_note_ids(long long user_id) {
    return reading("trashed_note_ids", [&] {
        std::vector<std::string> ids;
        detail::NoteStatements& s = note_statements();
        s.user_id = user_id;
        s.trashed_ids.execute();
        while (s.trashed_ids.fetch()) ids.push_back(s.trashed_uuid);
        detail::end_read(s.trashed_ids);
        return ids;
    });
}

bool SociStore::delete_note(long long user_id, const std::string& note_id) {
    const std::optional<std::string> id = parse_uuid(note_id);
    if (!id) return false;
    const std::optional<detail::StoredTerms> before = stored_terms(user_id, *id);
    return locked_write("delete_note", user_id, [&] {
        if (remove_note_locked(user_id, *id, before ? &*before : nullptr)) return true;
        detail::NoteStatements& s = note_statements();
        s.user_id = user_id;
        s.note_uuid = *id;
        exec(s.trashed_delete);
        return s.trashed_delete.get_affected_rows() > 0;
    });
}

}  // namespace notesd
