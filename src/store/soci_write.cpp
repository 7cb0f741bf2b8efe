// The write path of SociStore: batches of collections and notes, note deletion, the
// maintained counts (users.note_count / collection_count / token sums, collections.note_count)
// and the search index (postings, term_df) kept in step in the same transaction.
#include <algorithm>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "index/note_index.hpp"
#include "index/postings_format.hpp"
#include "store/plain_text_codec.hpp"
#include "store/soci_stmt.hpp"
#include "store/soci_store.hpp"
#include "store/time_counts.hpp"
#include "base/util.hpp"

namespace notesd {

using detail::exec;
using detail::fetch_one;
using detail::NoteWrite;
using detail::WriteStatements;

namespace {

// Netted postings changes held in memory before a write_batch applies them, and the most a
// prepared batch's prebuilt segment holds. An import batch (5,000 notes of up to 400 distinct
// terms; the bench's 2 KB notes have about 150) is then one segment; a cap below a batch's
// postings splits it into several, and the import's final merge has that many times the
// segments to merge and drop (2,500-note batches under a cap of 200,000 made three each: a
// 20,000-note import 21 -> 13 s when it was raised). A builder's posting takes about 45 bytes
// while it is built: 90 MB at most per builder, and an import holds two (the batch being
// written and the next one prebuilt).
constexpr std::size_t kMaxPendingPostings = 2000000;

// Postings rows of one user (PostingInserts::user_id) inserted kBatchRows per statement;
// flush() writes the rest one by one.
class PostingBuffer {
public:
    explicit PostingBuffer(detail::PostingInserts& w) : w_(w) {}
    void add(detail::PostingRow r) {
        w_.rows[n_++] = std::move(r);
        if (n_ == detail::kBatchRows) {
            exec(w_.many);
            n_ = 0;
        }
    }
    void flush() {
        for (std::size_t k = 0; k < n_; ++k) {
            if (k > 0) w_.rows[0] = std::move(w_.rows[k]);
            exec(w_.one);
        }
        n_ = 0;
    }

private:
    detail::PostingInserts& w_;
    std::size_t n_ = 0;
};

using detail::count_terms;
using detail::TermCount;

}  // namespace

void SociStore::lock_user(long long user_id) {
    WriteStatements& w = writes();
    w.user_id = user_id;
    if (!fetch_one(w.lock_user)) throw std::invalid_argument("no such user");
    segments_.begin_write(user_id);
}

void SociStore::upsert_collection(const CollectionInput& c, std::map<std::string, long long>& ids,
                                  detail::IndexDelta& delta) {
    WriteStatements& w = writes();
    w.collection_uuid = c.id;
    w.title = c.title;
    w.description = c.description.value_or("");
    w.description_ind = c.description ? soci::i_ok : soci::i_null;
    w.created_us = c.created_us;
    w.updated_us = c.updated_us;
    if (fetch_one(w.collection_find)) {
        ids[c.id] = w.found_id;
        const bool had_desc = w.found_description_ind == soci::i_ok;
        const bool same = w.found_title == c.title && had_desc == c.description.has_value() &&
                          (!had_desc || w.found_description == *c.description) &&
                          w.found_created_us == c.created_us && w.found_updated_us == c.updated_us;
        if (same) return;
        w.row_id = w.found_id;
        exec(w.collection_update);
        return;
    }
    ids[c.id] = run_insert(w.collection_insert, "collections", w.inserted_id);
    ++delta.collections;
}

// Resolves the note's collections first, so an unknown one fails before anything is written.
WriteOutcome SociStore::upsert_note(const NoteWrite& n, std::map<std::string, long long>& ids,
                                    detail::IndexDelta& delta) {
    WriteStatements& w = writes();
    for (const std::string& c : n.collections) {
        if (ids.count(c)) continue;
        w.collection_uuid = c;
        if (!fetch_one(w.collection_find))
            throw std::invalid_argument("note " + n.id + " names an unknown collection " + c);
        ids[c] = w.found_id;
    }
    w.note_uuid = n.id;
    const bool existed = fetch_one(w.note_find);
    const long long stored_version = existed ? w.found_version : 0;
    if (existed && w.found_hash == n.hash && (!n.version || *n.version == stored_version))
        return WriteOutcome::Unchanged;
    const detail::NoteTimes before{w.found_created_us, w.found_updated_us, w.found_flags};
    const detail::NoteTimes after{n.in->created_us, n.in->updated_us, n.in->flags};
    time_counts().note_changed(existed ? &before : nullptr, &after);
    long long note_id = w.found_id;
    // The stored index is read before the update overwrites it.
    if (existed) reindex_note(&n, note_id, true, n.id, delta, n.before);
    const NoteInput& in = *n.in;
    w.title = in.title;
    w.snippet = in.snippet;
    w.content = in.content;
    w.created_us = in.created_us;
    w.updated_us = in.updated_us;
    w.flags = in.flags;
    w.collection_uuids = n.collections_text;
    w.audio_uuids = n.audio_text;
    w.content_hash = n.hash;
    w.title_len = n.title_len;
    w.body_len = n.body_len;
    w.plain_text = n.stored_plain_text;
    w.version = n.version ? *n.version : stored_version + 1;
    if (existed) {
        w.row_id = note_id;
        exec(w.note_update);
        exec(w.text_update);
    } else {
        w.note_uuid = n.id;
        note_id = run_insert(w.note_insert, "notes", w.inserted_id);
        w.row_id = note_id;
        exec(w.text_insert);
        ++delta.notes;
        reindex_note(&n, note_id, false, n.id, delta);
    }
    relink_note(n, note_id, existed, ids);
    return existed ? WriteOutcome::Updated : WriteOutcome::Inserted;
}

// Postings rows carry the note's counts and lengths, so a row is rewritten when its key moves
// (updated_us), when a copied column changes (created_us, flags, either field length) or when
// its term's counts change; a note's other rows stay as they are. A pending note's postings are
// its pending row only, and term_df counts the terms its row names in `minus`.
void SociStore::reindex_note(const NoteWrite* n, long long note_id, bool existed,
                             const std::string& uuid, detail::IndexDelta& delta,
                             const detail::StoredTerms* before) {
    WriteStatements& w = writes();
    long long hi = 0, lo = 0;
    detail::uuid_halves(uuid, hi, lo);
    const std::optional<detail::PendingNotes::Stored> pend =
        delta.none_pending ? std::nullopt : pending_.find(w.user_id, hi, lo);
    std::vector<TermCount> old_terms;  // the terms term_df counts for the note
    long long old_updated = 0, old_created = 0, old_flags = 0, old_lens = 0;
    bool in_segment = false;  // its postings are a segment's: marked dead there, no rows to remove
    if (existed) {
        w.row_id = note_id;
        if (!fetch_one(w.note_stored_index)) throw std::runtime_error("note vanished while indexing");
        w.old_plain_text = detail::decode_plain_text(w.old_content, w.old_plain_text);
        const bool counted = before && before->title == w.old_title && before->plain_text == w.old_plain_text;
        if (!pend) old_terms = counted ? before->terms : detail::count_stored_terms(w.old_title, w.old_plain_text);
        delta.title_tokens -= w.old_title_len;
        delta.body_tokens -= w.old_body_len;
        old_updated = w.old_updated_us;
        old_created = w.old_created_us;
        old_flags = w.old_flags;
        old_lens = pack_pair(w.old_title_len, w.old_body_len);
        if (!pend) in_segment = segments_.remove_note(w.user_id, old_updated, hi, lo);
    }
    if (pend) {
        for (const std::string& t : pend->minus) old_terms.push_back(TermCount{t, 0, 0, {}});
        pending_.erase(pend->id);
    }
    const bool has_rows = existed && !pend && !in_segment;
    if (delta.to_pending) {
        queue_pending(n, note_id, hi, lo, old_terms,
                      has_rows ? std::optional<long long>(old_updated) : std::nullopt, delta);
        return;
    }
    // A note the prebuilt segment cannot stand for (not new) drops it before the new terms are
    // read: the batch's terms went into it and come back with the drop.
    if (delta.prebuilt && (!n || existed || !old_terms.empty())) detail::drop_prebuilt(delta);
    static const std::vector<TermCount> kNone;
    const std::vector<TermCount>& new_terms = n ? n->terms : kNone;
    const long long new_lens = n ? pack_pair(n->title_len, n->body_len) : 0;
    // A note leaving a segment, or going into one, has every posting written anew.
    const bool moved = !n || in_segment || delta.to_segment || old_updated != n->in->updated_us ||
                       old_created != n->in->created_us || old_flags != n->in->flags ||
                       old_lens != new_lens;
    auto by_term = [](const TermCount& a, const TermCount& b) { return a.term < b.term; };
    for (const TermCount& t : old_terms) {
        auto it = std::lower_bound(new_terms.begin(), new_terms.end(), t, by_term);
        const bool kept = it != new_terms.end() && it->term == t.term;
        const bool same = kept && it->pos == t.pos && it->title_tf == t.title_tf &&
                          it->body_tf == t.body_tf;
        if (!kept) delta.df.emplace_back(t.term, -1);
        if ((!same || moved) && has_rows) delta.remove(detail::PostingKey{t.term, old_updated, hi, lo});
    }
    if (!n) return;
    delta.title_tokens += n->title_len;
    delta.body_tokens += n->body_len;
    if (delta.to_segment) {  // the whole note into the segment (a later version replaces it)
        if (delta.prebuilt) {  // new: in the prebuilt segment already
            delta.prebuilt->taken.push_back(n);
            return;
        }
        detail::add_to_segment(*n, old_terms, delta);
        return;
    }
    for (const TermCount& t : new_terms) {
        auto it = std::lower_bound(old_terms.begin(), old_terms.end(), t, by_term);
        const bool had = it != old_terms.end() && it->term == t.term;
        const bool same = had && it->pos == t.pos && it->title_tf == t.title_tf &&
                          it->body_tf == t.body_tf;
        if (!had) delta.df.emplace_back(t.term, +1);
        if (!same || moved)
            delta.add(detail::PostingKey{t.term, n->in->updated_us, hi, lo}, note_id,
                      n->in->created_us, n->in->flags, pack_pair(t.title_tf, t.body_tf),
                      new_lens, t.pos);
    }
}

// An API write's index change as one pending row (store/pending_notes.hpp): the old version's
// postings rows go now (a segment's were marked dead), its term_df counts wait in `minus` with
// the new version's terms until a fold.
void SociStore::queue_pending(const NoteWrite* n, long long note_id, long long hi, long long lo,
                              const std::vector<TermCount>& old_terms,
                              std::optional<long long> rows_updated_us, detail::IndexDelta& delta) {
    if (rows_updated_us)
        for (const TermCount& t : old_terms) delta.remove(detail::PostingKey{t.term, *rows_updated_us, hi, lo});
    detail::PendingEntry e;
    e.note.uid_hi = hi;
    e.note.uid_lo = lo;
    e.minus.reserve(old_terms.size());
    for (const TermCount& t : old_terms) e.minus.push_back(t.term);
    if (n) {
        delta.title_tokens += n->title_len;
        delta.body_tokens += n->body_len;
        e.note_id = note_id;
        e.note = SegmentNote{n->in->updated_us, hi, lo, n->in->created_us, n->in->flags,
                             n->title_len, n->body_len};
        e.terms = n->terms;
    }
    if (!e.terms.empty() || !e.minus.empty()) pending_.insert(writes().user_id, e);
}

// Sorting makes the writes B-tree ordered. Per posting key the first change tells whether the
// row exists now (a removal: it does) and the last one whether it must exist afterwards.
void SociStore::apply_index(long long user_id, detail::IndexDelta& delta) {
    WriteStatements& w = writes();
    w.user_id = user_id;
    std::vector<detail::IndexDelta::Op>& ops = delta.ops;
    std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
    index_->before_postings_write(user_id, ops);
    w.postings.user_id = user_id;
    PostingBuffer inserts(w.postings);
    for (std::size_t i = 0; i < ops.size();) {
        std::size_t j = i + 1;
        while (j < ops.size() && !(ops[i].key < ops[j].key)) ++j;
        const detail::IndexDelta::Op& last = ops[j - 1];
        const bool existed = !ops[i].add;
        if (existed) {  // deleted at once, so a later insert of the same key cannot collide
            w.term = ops[i].key.term;
            w.posting_updated_us = ops[i].key.updated_us;
            w.posting_uid_hi = ops[i].key.uid_hi;
            w.posting_uid_lo = ops[i].key.uid_lo;
            exec(w.posting_delete);
        }
        if (last.add)
            inserts.add(detail::PostingRow{ops[i].key.term, ops[i].key.updated_us, ops[i].key.uid_hi,
                                           ops[i].key.uid_lo, last.note_id, last.created_us, last.flags,
                                           last.tfs, last.lens, last.pos});
        i = j;
    }
    inserts.flush();
    segments_.flush(user_id, delta.segment);  // and the live sets reindex_note changed
    apply_df(delta.df);
    if (delta.notes || delta.collections || delta.title_tokens || delta.body_tokens) {
        w.notes_delta = delta.notes;
        w.collections_delta = delta.collections;
        w.title_tokens_delta = delta.title_tokens;
        w.body_tokens_delta = delta.body_tokens;
        exec(w.user_counts_add);
    }
    const bool to_segment = delta.to_segment, to_pending = delta.to_pending;
    const bool none_pending = delta.none_pending;
    detail::PrebuiltSegment* const prebuilt = delta.prebuilt;
    delta = detail::IndexDelta();
    delta.prebuilt = prebuilt;
    delta.to_segment = to_segment;
    delta.to_pending = to_pending;
    delta.none_pending = none_pending;
}

// term_df changes, summed per term and applied in term order: upserted kBatchRows terms per
// statement, the rest with at most one statement of each smaller size (kDfUpsertRows); then the
// rows that decreases emptied are deleted, kBatchRows terms per statement.
void SociStore::apply_df(std::vector<std::pair<std::string, int>>& changes) {
    WriteStatements& w = writes();
    // Summed per term before sorting: a batch's frequent terms recur in most of its notes, so
    // there are several times fewer terms than changes.
    std::unordered_map<std::string_view, long long> sums;
    sums.reserve(changes.size() / 2 + 16);
    for (const auto& [term, d] : changes) sums[term] += d;
    std::vector<std::pair<std::string_view, long long>> all;
    std::vector<std::string_view> down;
    for (const auto& change : sums) {
        if (change.second == 0) continue;
        all.push_back(change);
        if (change.second < 0) down.push_back(change.first);
    }
    std::sort(all.begin(), all.end());
    std::sort(down.begin(), down.end());
    std::size_t i = 0;
    for (std::size_t k = 0; k < detail::kDfUpsertRows.size(); ++k) {
        const std::size_t rows = detail::kDfUpsertRows[k];
        for (; all.size() - i >= rows; i += rows) {
            for (std::size_t slot = 0; slot < rows; ++slot) {
                w.df_terms[slot].assign(all[i + slot].first);
                w.df_deltas[slot] = all[i + slot].second;
            }
            exec(w.df_upserts[k]);
        }
    }
    for (i = 0; i < down.size(); i += detail::kBatchRows) {
        const std::size_t n = std::min(detail::kBatchRows, down.size() - i);
        for (std::size_t slot = 0; slot < detail::kBatchRows; ++slot)
            w.df_terms[slot].assign(down[i + std::min(slot, n - 1)]);
        exec(w.df_drop_empty);
    }
}

// Rewrites the note's collection links (with its current sort keys) and attachments, and
// moves collections.note_count by the difference between the old and new link sets.
void SociStore::relink_note(const NoteWrite& n, long long note_id, bool existed,
                            const std::map<std::string, long long>& ids) {
    WriteStatements& w = writes();
    w.row_id = note_id;
    std::vector<long long> old_links;
    if (existed) {
        w.note_links.execute();
        while (w.note_links.fetch()) old_links.push_back(w.linked_collection_id);
        exec(w.links_delete);
        exec(w.attachments_delete);
    }
    std::vector<long long> new_links;
    for (const std::string& c : n.collections) new_links.push_back(ids.at(c));
    for (long long c : new_links) {
        w.collection_id = c;
        exec(w.link_insert);
    }
    auto bump = [&](long long c, long long delta) {
        w.collection_id = c;
        w.note_count_delta = delta;
        exec(w.collection_count_add);
    };
    for (long long c : old_links)
        if (std::find(new_links.begin(), new_links.end(), c) == new_links.end()) bump(c, -1);
    for (long long c : new_links)
        if (std::find(old_links.begin(), old_links.end(), c) == old_links.end()) bump(c, +1);
    const std::vector<Attachment>& atts = n.in->attachments;
    for (std::size_t i = 0; i < atts.size(); ++i) {
        w.attachment_uuid = n.attachment_ids[i];
        w.kind = detail::attachment_kind_name(atts[i].kind);
        w.target = atts[i].target;
        exec(w.attachment_insert);
    }
}

namespace {

// Validated before the transaction: a bad item fails the batch without a write.
std::vector<CollectionInput> checked_collections(std::vector<CollectionInput> colls) {
    for (CollectionInput& c : colls) {
        c.id = detail::canonical(c.id, "collection");
        detail::need_utf8(c.title, "collection title");
        if (c.description) detail::need_utf8(*c.description, "collection description");
    }
    return colls;
}

// prepare_batch's notes with their analysis (each NoteWrite points into `notes`, whose
// elements stay where they are when the object moves).
struct SociPreparedNotes : PreparedNotes {
    std::vector<NoteWrite> writes;
    std::optional<detail::PrebuiltSegment> prebuilt;  // a batch written as a segment
};

}  // namespace

std::vector<WriteOutcome> SociStore::write_batch(long long user_id,
                                                 const std::vector<CollectionInput>& collections,
                                                 const std::vector<NoteInput>& notes) {
    const std::vector<CollectionInput> colls = checked_collections(collections);
    return write_notes(user_id, colls, detail::prepare_notes(notes));
}

std::unique_ptr<PreparedNotes> SociStore::prepare_batch(std::vector<NoteInput> notes) const {
    auto out = std::make_unique<SociPreparedNotes>();
    out->notes = std::move(notes);
    out->writes = detail::prepare_notes(out->notes);
    // The segment is built here, beside the previous batch's write, rather than by the writer:
    // while batches are new notes (a re-import of stored ones would build it to drop it), and
    // within the postings write_notes holds at once.
    std::size_t postings = 0;
    for (const detail::NoteWrite& w : out->writes) postings += w.terms.size();
    if (out->writes.size() >= detail::kSegmentMinNotes && postings <= kMaxPendingPostings &&
        last_batch_new_.load(std::memory_order_relaxed))
        detail::prebuild_segment(out->writes, out->prebuilt.emplace());
    return out;
}

std::vector<WriteOutcome> SociStore::write_prepared(long long user_id,
                                                    const std::vector<CollectionInput>& collections,
                                                    PreparedNotes& prepared) {
    auto* mine = dynamic_cast<SociPreparedNotes*>(&prepared);
    if (!mine) return write_batch(user_id, collections, prepared.notes);
    return write_notes(user_id, checked_collections(collections), mine->writes,
                       mine->prebuilt ? &*mine->prebuilt : nullptr);
}

std::vector<WriteOutcome> SociStore::write_notes(long long user_id,
                                                 const std::vector<CollectionInput>& colls,
                                                 const std::vector<NoteWrite>& prepared,
                                                 detail::PrebuiltSegment* prebuilt) {
    return guarded("write_batch", [&] {
        std::vector<WriteOutcome> out;
        out.reserve(prepared.size());
        detail::WriteTxn tx(sql_, dialect_->begin_write(), after_commit());
        lock_user(user_id);
        time_counts().discard();
        std::map<std::string, long long> ids;
        detail::IndexDelta delta;
        delta.to_segment = prepared.size() >= detail::kSegmentMinNotes;
        delta.none_pending = pending_.count(user_id) == 0;  // a batch writes no pending row
        if (delta.to_segment && prebuilt && !prebuilt->spent) {
            prebuilt->taken.clear();
            delta.prebuilt = prebuilt;
        } else if (prebuilt) {
            detail::take_back_terms(*prebuilt);  // the batch's notes are indexed one by one
        }
        for (const CollectionInput& c : colls) upsert_collection(c, ids, delta);
        for (const NoteWrite& n : prepared) {
            // Ids are unique across live and trashed notes: a re-import leaves a trashed one
            // in the trash.
            if (is_trashed(user_id, n.id)) {
                out.push_back(WriteOutcome::Unchanged);
                if (delta.prebuilt) detail::drop_prebuilt(delta);
                continue;
            }
            out.push_back(upsert_note(n, ids, delta));
            if (delta.prebuilt && out.back() != WriteOutcome::Inserted) detail::drop_prebuilt(delta);
            // A huge batch is applied in parts, so memory stays bounded (prepare_batch builds a
            // prebuilt segment only within the same bound).
            if (delta.ops.size() + delta.segment.postings() >= kMaxPendingPostings)
                apply_index(user_id, delta);
        }
        if (delta.prebuilt) detail::use_prebuilt(delta);
        last_batch_new_.store(std::count(out.begin(), out.end(), WriteOutcome::Inserted) ==
                                  static_cast<std::ptrdiff_t>(out.size()),
                              std::memory_order_relaxed);
        apply_index(user_id, delta);
        time_counts().write(user_id);
        tx.commit();
        return out;
    });
}

// Pages through every note (by id, so memory stays bounded on a large database) and inserts
// its postings rows, each page's rows in key order.
void SociStore::rebuild_postings() {
    struct Row {
        long long user = 0;
        detail::PostingKey key;
        long long note = 0, created = 0, flags = 0, tfs = 0, lens = 0;
        std::string pos;
    };
    detail::PostingInserts postings(sql_);
    long long last = 0, lim = 1000, id = 0, user = 0, updated = 0, created = 0, flags = 0;
    long long tlen = 0, blen = 0;
    std::string uuid, title, content, plain;
    soci::statement page = detail::Prep(sql_, "SELECT n.id, n.user_id, n.uuid, n.updated_us, "
                                              "n.created_us, n.flags, n.title_len, n.body_len, "
                                              "n.title, n.content, t.plain_text FROM notes n JOIN "
                                              "note_text t ON t.note_id = n.id WHERE n.id > :last "
                                              "ORDER BY n.id" + dialect_->limit_clause())
                               .out(id).out(user).out(uuid).out(updated).out(created).out(flags)
                               .out(tlen).out(blen).out(title).out(content).out(plain)
                               .in(last, "last").in(lim, "lim")
                               .done();
    for (;;) {
        std::vector<Row> rows;
        long long seen = 0;
        page.execute();
        while (page.fetch()) {
            ++seen;
            last = id;
            long long hi = 0, lo = 0;
            detail::uuid_halves(uuid, hi, lo);
            for (TermCount& t : detail::count_stored_terms(title, detail::decode_plain_text(content, plain)))
                rows.push_back(Row{user, detail::PostingKey{t.term, updated, hi, lo}, id, created,
                                   flags, pack_pair(t.title_tf, t.body_tf),
                                   pack_pair(tlen, blen), std::move(t.pos)});
        }
        std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
            return a.user != b.user ? a.user < b.user : a.key < b.key;
        });
        PostingBuffer inserts(postings);
        for (const Row& r : rows) {
            if (r.user != postings.user_id) inserts.flush();  // one statement holds one user's rows
            postings.user_id = r.user;
            inserts.add(detail::PostingRow{r.key.term, r.key.updated_us, r.key.uid_hi, r.key.uid_lo, r.note,
                                           r.created, r.flags, r.tfs, r.lens, r.pos});
        }
        inserts.flush();
        if (seen < lim) break;
    }
}

long long SociStore::pack_postings(long long user_id) {
    return guarded("pack_postings", [&]() -> long long {
        if (!index_->keeps_packed_copy()) return 0;  // the server backends read rows
        detail::WriteTxn tx(sql_, dialect_->begin_write(), after_commit());
        lock_user(user_id);
        const long long written = index_->pack_user(user_id);
        tx.commit();
        return written;
    });
}

// One note through write_batch's path, inside the caller's transaction with the user locked:
// the note, its links, attachments, counts and search index.
WriteOutcome SociStore::write_note_locked(long long user_id, const NoteInput& n,
                                          std::optional<long long> version,
                                          std::optional<detail::AnalysedNote> analysed,
                                          const detail::StoredTerms* before) {
    NoteWrite note = detail::prepare_note(n, std::move(analysed));
    note.version = version;
    note.before = before;
    std::map<std::string, long long> ids;
    detail::IndexDelta delta;
    delta.to_pending = true;
    time_counts().discard();
    const WriteOutcome out = upsert_note(note, ids, delta);
    apply_index(user_id, delta);
    time_counts().write(user_id);
    return out;
}

// Removes a live note with its links, attachments, counts and index entries, inside the
// caller's transaction with the user locked; false when the user has no such live note.
bool SociStore::remove_note_locked(long long user_id, const std::string& uuid,
                                   const detail::StoredTerms* before) {
    WriteStatements& w = writes();
    w.user_id = user_id;
    w.note_uuid = uuid;
    if (!fetch_one(w.note_find)) return false;
    const long long nid = w.found_id;
    time_counts().discard();
    const detail::NoteTimes gone{w.found_created_us, w.found_updated_us, w.found_flags};
    time_counts().note_changed(&gone, nullptr);
    detail::IndexDelta delta;
    delta.to_pending = true;
    reindex_note(nullptr, nid, true, uuid, delta, before);
    delta.notes = -1;
    w.row_id = nid;
    std::vector<long long> links;
    w.note_links.execute();
    while (w.note_links.fetch()) links.push_back(w.linked_collection_id);
    for (long long c : links) {
        w.collection_id = c;
        w.note_count_delta = -1;
        exec(w.collection_count_add);
    }
    // Explicit deletes keep the counts right even on a connection without foreign keys.
    w.row_id = nid;
    exec(w.links_delete);
    exec(w.attachments_delete);
    exec(w.text_delete);
    exec(w.note_delete);
    apply_index(user_id, delta);
    time_counts().write(user_id);
    return true;
}

}  // namespace notesd
