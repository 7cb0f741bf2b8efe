// The write path of SociStore: batches of collections and notes, note deletion, and the
// maintained counts (users.note_count / collection_count, collections.note_count).
#include <algorithm>
#include <stdexcept>

#include "store/soci_stmt.hpp"
#include "util.hpp"

namespace notesd {

using detail::exec;
using detail::fetch_one;
using detail::NoteWrite;
using detail::WriteStmts;

namespace {

const char* kind_name(AttachmentKind k) {
    switch (k) {
        case AttachmentKind::Image: return "image";
        case AttachmentKind::Audio: return "audio";
        case AttachmentKind::File: break;
    }
    return "file";
}

std::string canonical(const std::string& uuid, const char* what) {
    const std::optional<std::string> id = parse_uuid(uuid);
    if (!id) throw std::invalid_argument(std::string("invalid ") + what + " id");
    return *id;
}

void need_utf8(const std::string& s, const char* what) {
    if (!valid_utf8(s)) throw std::invalid_argument(std::string(what) + " is not valid UTF-8");
}

std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const std::string& s : v) out += (out.empty() ? "" : ",") + s;
    return out;
}

// Length-prefixed fields, so no two different notes serialise alike.
void field(std::string& s, const std::string& v) {
    s += std::to_string(v.size());
    s += ':';
    s += v;
}

NoteWrite prepare_note(const NoteInput& n) {
    NoteWrite w;
    w.in = &n;
    w.id = canonical(n.id, "note");
    need_utf8(n.title, "note title");
    need_utf8(n.snippet, "note snippet");
    need_utf8(n.content, "note content");
    for (const std::string& c : n.collection_ids) {
        std::string id = canonical(c, "collection");
        if (std::find(w.collections.begin(), w.collections.end(), id) == w.collections.end())
            w.collections.push_back(std::move(id));
    }
    std::vector<std::string> audio;
    for (const Attachment& a : n.attachments) {
        w.attachment_ids.push_back(canonical(a.id, "attachment"));
        need_utf8(a.target, "attachment target");
        if (a.kind == AttachmentKind::Audio) audio.push_back(w.attachment_ids.back());
    }
    w.collections_text = join(w.collections);
    w.audio_text = join(audio);
    std::string s = "notesd-note-v1|";
    field(s, n.title);
    field(s, n.snippet);
    field(s, n.content);
    field(s, std::to_string(n.created_us));
    field(s, std::to_string(n.updated_us));
    field(s, std::to_string(n.flags));
    field(s, w.collections_text);
    for (std::size_t i = 0; i < n.attachments.size(); ++i) {
        field(s, w.attachment_ids[i]);
        field(s, kind_name(n.attachments[i].kind));
        field(s, n.attachments[i].target);
    }
    w.hash = sha256_hex(s);
    return w;
}

}  // namespace

void SociStore::lock_user(long long user_id) {
    WriteStmts& w = writes();
    w.u = user_id;
    if (!fetch_one(w.lock_user)) throw std::invalid_argument("no such user");
}

void SociStore::upsert_collection(const CollectionInput& c, std::map<std::string, long long>& ids,
                                  long long& added) {
    WriteStmts& w = writes();
    w.cuuid = c.id;
    w.title = c.title;
    w.description = c.description.value_or("");
    w.desc_ind = c.description ? soci::i_ok : soci::i_null;
    w.created = c.created_us;
    w.updated = c.updated_us;
    if (fetch_one(w.coll_find)) {
        ids[c.id] = w.o_id;
        const bool had_desc = w.o_desc_ind == soci::i_ok;
        const bool same = w.o_title == c.title && had_desc == c.description.has_value() &&
                          (!had_desc || w.o_desc == *c.description) &&
                          w.o_created == c.created_us && w.o_updated == c.updated_us;
        if (same) return;
        w.id = w.o_id;
        exec(w.coll_update);
        return;
    }
    ids[c.id] = run_insert(w.coll_insert, "collections", w.new_id);
    ++added;
}

// Resolves the note's collections first, so an unknown one fails before anything is written.
WriteOutcome SociStore::upsert_note(const NoteWrite& n, std::map<std::string, long long>& ids,
                                    long long& added) {
    WriteStmts& w = writes();
    for (const std::string& c : n.collections) {
        if (ids.count(c)) continue;
        w.cuuid = c;
        if (!fetch_one(w.coll_find))
            throw std::invalid_argument("note " + n.id + " names an unknown collection " + c);
        ids[c] = w.o_id;
    }
    w.uuid = n.id;
    const bool existed = fetch_one(w.note_find);
    if (existed && w.o_hash == n.hash) return WriteOutcome::Unchanged;
    const long long existing_id = w.o_id;
    const NoteInput& in = *n.in;
    w.title = in.title;
    w.snippet = in.snippet;
    w.content = in.content;
    w.created = in.created_us;
    w.updated = in.updated_us;
    w.flags = in.flags;
    w.colls = n.collections_text;
    w.audios = n.audio_text;
    w.hash = n.hash;
    long long note_id = existing_id;
    if (existed) {
        w.id = note_id;
        exec(w.note_update);
    } else {
        note_id = run_insert(w.note_insert, "notes", w.new_id);
        ++added;
    }
    relink_note(n, note_id, existed, ids);
    return existed ? WriteOutcome::Updated : WriteOutcome::Inserted;
}

// Rewrites the note's collection links (with its current sort keys) and attachments, and
// moves collections.note_count by the difference between the old and new link sets.
void SociStore::relink_note(const NoteWrite& n, long long note_id, bool existed,
                            const std::map<std::string, long long>& ids) {
    WriteStmts& w = writes();
    w.id = note_id;
    std::vector<long long> old_links;
    if (existed) {
        w.note_links.execute();
        while (w.note_links.fetch()) old_links.push_back(w.link);
        exec(w.links_delete);
        exec(w.att_delete);
    }
    std::vector<long long> new_links;
    for (const std::string& c : n.collections) new_links.push_back(ids.at(c));
    for (long long c : new_links) {
        w.cid = c;
        exec(w.link_insert);
    }
    auto bump = [&](long long c, long long delta) {
        w.cid = c;
        w.delta = delta;
        exec(w.coll_bump);
    };
    for (long long c : old_links)
        if (std::find(new_links.begin(), new_links.end(), c) == new_links.end()) bump(c, -1);
    for (long long c : new_links)
        if (std::find(old_links.begin(), old_links.end(), c) == old_links.end()) bump(c, +1);
    const std::vector<Attachment>& atts = n.in->attachments;
    for (std::size_t i = 0; i < atts.size(); ++i) {
        w.auuid = n.attachment_ids[i];
        w.kind = kind_name(atts[i].kind);
        w.target = atts[i].target;
        exec(w.att_insert);
    }
}

std::vector<WriteOutcome> SociStore::write_batch(long long user_id,
                                                 const std::vector<CollectionInput>& collections,
                                                 const std::vector<NoteInput>& notes) {
    // Validate everything before the transaction: a bad item fails the batch without a write.
    std::vector<CollectionInput> colls = collections;
    for (CollectionInput& c : colls) {
        c.id = canonical(c.id, "collection");
        need_utf8(c.title, "collection title");
        if (c.description) need_utf8(*c.description, "collection description");
    }
    std::vector<NoteWrite> prepared;
    prepared.reserve(notes.size());
    for (const NoteInput& n : notes) prepared.push_back(prepare_note(n));

    return guarded("write_batch", [&] {
        std::vector<WriteOutcome> out;
        out.reserve(prepared.size());
        detail::WriteTxn tx(sql_, dialect_->begin_write());
        lock_user(user_id);
        std::map<std::string, long long> ids;
        long long added_colls = 0;
        long long added_notes = 0;
        for (const CollectionInput& c : colls) upsert_collection(c, ids, added_colls);
        for (const NoteWrite& n : prepared) out.push_back(upsert_note(n, ids, added_notes));
        if (added_colls || added_notes) {
            WriteStmts& w = writes();
            w.u = user_id;
            w.dn = added_notes;
            w.dc = added_colls;
            exec(w.user_bump);
        }
        tx.commit();
        return out;
    });
}

bool SociStore::delete_note(long long user_id, const std::string& note_id) {
    const std::optional<std::string> id = parse_uuid(note_id);
    if (!id) return false;
    return guarded("delete_note", [&] {
        detail::WriteTxn tx(sql_, dialect_->begin_write());
        WriteStmts& w = writes();
        w.u = user_id;
        if (!fetch_one(w.lock_user)) return false;
        w.uuid = *id;
        if (!fetch_one(w.note_find)) return false;
        w.id = w.o_id;
        std::vector<long long> links;
        w.note_links.execute();
        while (w.note_links.fetch()) links.push_back(w.link);
        for (long long c : links) {
            w.cid = c;
            w.delta = -1;
            exec(w.coll_bump);
        }
        // Explicit deletes keep the counts right even on a connection without foreign keys.
        exec(w.links_delete);
        exec(w.att_delete);
        exec(w.note_delete);
        w.u = user_id;
        w.dn = -1;
        w.dc = 0;
        exec(w.user_bump);
        tx.commit();
        return true;
    });
}

}  // namespace notesd
