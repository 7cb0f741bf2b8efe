// SociStore's merge policy steps (index/merge_policy.hpp): folding the users' postings rows into
// segments and merging segments (store/segments.hpp), each write a short transaction, so the
// user's writes (and on SQLite every writer) wait at most for a bounded amount of work.
#include <algorithm>
#include <chrono>

#include "store/plain_text_codec.hpp"
#include "store/soci_stmt.hpp"
#include "store/sqlite_direct.hpp"
#include "store/soci_store.hpp"

namespace notesd {

using detail::Prep;

namespace {

using Clock = std::chrono::steady_clock;

// Notes a pack folds per step (the background merger folds its policy's fold_batch_notes):
// more per transaction than the merger, so a large backlog of rows becomes few segments.
constexpr long long kPackFoldNotes = 256;
constexpr long long kPackFoldPostings = 50000;
// index_state counts the notes with postings rows up to this many (the count scans the rows).
constexpr long long kPendingCap = 4096;
// A merge writes its blocks this many (or this many bytes) per transaction.
constexpr std::size_t kBlocksPerWrite = 250;
constexpr std::size_t kBytesPerWrite = 512 << 10;
// A retired segment loses its blocks about this many (or this many bytes) per transaction:
// each is one contiguous range of the table and its index, so a transaction costs a few
// pages besides those it frees (a pack of 100,000 notes: 0.25 ms each at 250 blocks, 0.7 ms
// at 1,000, 2.5 ms at 4,000, the larger ones a little faster in all).
constexpr std::size_t kBlocksPerDelete = 1000;
constexpr std::size_t kBytesPerDelete = 4 << 20;
// A fold's blocks are small (a few postings each) and appended (schema 016): 1,500 took 2.1 ms.
constexpr std::size_t kFoldBlocksPerWrite = 4000;
// Steps a pack runs at most after losing one to a concurrent merge.
constexpr int kLostStepsAllowed = 3;

}  // namespace

// A step's transactions need no WAL sync of their own (DbTarget::sync_index_steps): none
// holds anything a client was told is stored. Each leaves the index exact, and the WAL is
// written in order, so a power loss keeps a prefix of them, a state the next step carries on
// from like the one a SIGKILL leaves (a hidden segment half written, retired blocks not yet
// dropped); the next synced commit, or a checkpoint's own sync, covers their frames. A pack
// spent nearly half its time in those syncs. The merger still syncs: without, the workers'
// syncs beside it flushed its pages as well and API writes' p99 doubled.
template <class F>
long long SociStore::step_write(const char* op, long long lock_user_id, IndexStep& step, F&& f) {
    return guarded(op, [&] {
        struct Listened {  // before the BEGIN, after the COMMIT or the ROLLBACK of ~WriteTxn
            StepWriteListener* l;
            explicit Listened(StepWriteListener* x) : l(x) { if (l) l->before_write(); }
            ~Listened() { if (l) l->after_write(); }
        } listened(step_listener_);
        detail::WriteTxn tx(sql_, dialect_->begin_write(),
                            target_.sync_index_steps ? after_commit() : std::function<void()>());
        if (lock_user_id != 0) lock_user(lock_user_id);
        const Clock::time_point t0 = Clock::now();
        f();
        tx.commit();
        const long long us =
            std::chrono::duration_cast<std::chrono::microseconds>(tx.committed_at() - t0).count();
        if (us >= step.longest_write_us) {
            step.longest_write_us = us;
            step.longest_write_op = op;
        }
        ++step.write_transactions;
        return us;
    });
}

IndexCompaction SociStore::compact_index(long long user_id) {
    MergePolicy p;
    p.force = true;
    p.max_segments = detail::kMaxSegments;
    p.fold_batch_notes = p.fold_pending_notes = kPackFoldNotes;
    p.fold_batch_postings = p.fold_pending_postings = kPackFoldPostings;
    IndexCompaction out;
    drop_interrupted_merges(user_id);
    for (int lost = 0; lost <= kLostStepsAllowed;) {
        const MergePlan plan = plan_merge(p, index_state(user_id), 0, 0);
        if (plan.idle()) break;
        const IndexStep s = run_index_step(user_id, plan);
        lost += s.lost ? 1 : 0;
        ++out.steps;
        out.folded_notes += s.folded_notes;
        out.merged_segments += s.merged_segments;
        if (s.longest_write_us >= out.longest_write_us) {
            out.longest_write_us = s.longest_write_us;
            out.longest_write_op = s.longest_write_op;
        }
    }
    out.segments = static_cast<long long>(index_state(user_id).segments.size());
    // The merges freed the blocks of every segment they replaced (about a third of an
    // import's file): SQLite gives the free pages back to the file system where the file
    // allows it (auto_vacuum=INCREMENTAL, files created since schema 013's release).
    if (target_.backend == Backend::Sqlite)
        guarded("release_free_pages", [&] { detail::release_free_pages(sql_); });
    return out;
}

IndexState SociStore::index_state(long long user_id) {
    return reading("index_state", [&] {
        IndexState s;
        long long u = user_id, cap = kPendingCap;
        soci::statement pending =
            Prep(sql_, "SELECT " + dialect_->count_star() + " FROM (SELECT DISTINCT note_id FROM "
                       "postings WHERE user_id = :u" + dialect_->limit_clause() + ") pending")
                .out(s.pending_notes).in(u, "u").in(cap, "lim").done();
        detail::fetch_one(pending);
        s.pending_notes += pending_.count(user_id);
        for (const detail::SegmentRef& r : segments_.of_user(user_id))
            s.segments.push_back(SegmentStat{r.id, r.live.notes(), r.live.live_count()});
        return s;
    });
}

IndexStep SociStore::run_index_step(long long user_id, const MergePlan& plan) {
    IndexStep step;
    // API writes' pending entries first; then any postings rows (smaller imports, older data).
    if (plan.fold_notes > 0) {
        step.folded_notes = fold_pending(user_id, plan.fold_pending_notes, plan.fold_pending_postings, step);
        if (step.folded_notes == 0 && !step.lost)
            step_write("fold", user_id, step, [&] {
                step.folded_notes = fold_rows(user_id, plan.fold_notes, plan.fold_postings);
            });
    } else if (!plan.merge.empty()) {
        merge_step(user_id, plan.merge, step);
    }
    return step;
}

long long SociStore::drop_interrupted_merges(long long user_id) {
    IndexStep step;
    std::vector<long long> hidden;
    step_write("drop_interrupted_merges", 0, step, [&] { hidden = segments_.mark_hidden_dropping(user_id); });
    drop_segments(hidden, step);
    return static_cast<long long>(hidden.size());
}

void SociStore::drop_segments(const std::vector<long long>& segment_ids, IndexStep& step) {
    for (long long id : segment_ids) {
        const std::vector<std::string> cuts = reading("drop_segment", [&] {
            return segments_.block_cuts(id, kBlocksPerDelete, kBytesPerDelete);
        });
        std::string from;
        for (const std::string& to : cuts) {
            step_write("drop_segment", 0, step, [&] { segments_.delete_blocks(id, from, to); });
            from = to;
        }
        // the last range goes with the segment's row
        step_write("drop_segment", 0, step, [&] { segments_.delete_dropped(id); });
    }
}

template <class Produce>
std::shared_ptr<SegmentNotes> SociStore::write_hidden_segment(long long user_id, const HiddenWriteOps& ops,
                                                              std::size_t blocks_per_write, IndexStep& step,
                                                              long long& segment_id, Produce&& produce) {
    step_write(ops.begin, 0, step, [&] { segment_id = segments_.insert_unpublished(user_id); });
    // A segment whose blocks fit kSegmentPackBytes is written as one pack (a row instead of one
    // per block, index/segment_pack.hpp): its blocks are kept until they pass it. A larger one
    // is written as rows, its rare terms in groups (segment_pack.hpp), in short transactions.
    std::vector<SegmentBlock> kept, chunk;
    std::size_t kept_bytes = 0, bytes = 0;
    bool packing = true;
    auto write_chunk = [&] {
        if (!chunk.empty())
            step_write(ops.blocks, 0, step, [&] { segments_.insert_blocks(user_id, segment_id, chunk); });
        bytes = 0;
    };
    TermGrouper rows([&](SegmentBlock&& b) {
        bytes += b.data.size() + b.term.size();
        chunk.push_back(std::move(b));
        if (chunk.size() >= blocks_per_write || bytes >= kBytesPerWrite) write_chunk();
    });
    std::string table = produce([&](SegmentBlock&& b) {
        if (!packing) return rows.add(std::move(b));
        kept_bytes += b.data.size() + b.term.size();
        kept.push_back(std::move(b));
        if (kept_bytes <= kSegmentPackBytes) return;
        packing = false;  // too large: rows
        for (SegmentBlock& k : kept) rows.add(std::move(k));
        std::vector<SegmentBlock>().swap(kept);
    });
    if (!packing) {
        rows.finish();
        write_chunk();
    }
    else if (!kept.empty())
        step_write(ops.blocks, 0, step, [&] { segments_.insert_pack(user_id, segment_id, kept); });
    auto notes = std::make_shared<SegmentNotes>();
    if (!decode_segment_notes(table, *notes)) throw std::logic_error("a new notes table does not decode");
    step_write(ops.notes, 0, step, [&] { segments_.write_unpublished_notes(segment_id, table); });
    return notes;
}

// The inputs are read and merged outside any write transaction, the merged blocks written a
// few hundred per transaction; only the publish holds the user's lock (store/segments.hpp).
void SociStore::merge_step(long long user_id, const std::vector<long long>& ids, IndexStep& step) {
    std::vector<detail::SegmentRef> inputs = reading("merge_inputs", [&] {
        std::vector<detail::SegmentRef> out;
        for (detail::SegmentRef& r : segments_.of_user(user_id))
            if (std::find(ids.begin(), ids.end(), r.id) != ids.end()) out.push_back(std::move(r));
        return out;
    });
    if (inputs.size() != ids.size()) {
        step.lost = true;
        return;
    }
    std::vector<SegmentInput> in = reading("merge_read", [&] {
        std::vector<SegmentInput> out;
        for (const detail::SegmentRef& r : inputs) out.push_back(segments_.input_of(r));
        return out;
    });
    static const HiddenWriteOps kOps{"merge_begin", "merge_blocks", "merge_notes"};
    long long merged = 0;
    const std::shared_ptr<const SegmentNotes> notes = write_hidden_segment(
        user_id, kOps, kBlocksPerWrite, step, merged,
        [&](const std::function<void(SegmentBlock&&)>& emit) { return merge_segments(in, emit, target_.merge_threads); });
    in.clear();
    if (on_merge_written_) on_merge_written_();
    using Publish = detail::Segments::Publish;
    Publish done = Publish::lost;
    step_write("merge_publish", user_id, step, [&] { done = segments_.publish(user_id, merged, inputs, notes); });
    std::vector<long long> dropped;
    if (done == Publish::lost) {
        step.lost = true;
        step_write("merge_lost", 0, step, [&] { segments_.mark_dropping(merged); });
        dropped.push_back(merged);
    } else {
        step.merged_segments = static_cast<long long>(ids.size());
        dropped = ids;
        if (done == Publish::emptied) dropped.push_back(merged);
    }
    drop_segments(dropped, step);
}

// The oldest pending entries (API writes) go into a new segment in steps, as a merge's: the
// segment is written hidden outside the user's lock, then the publish, with the user locked,
// takes the entries still pending (term_df gains their terms and loses their `minus`) and
// leaves dead in the new segment the notes whose entry a write replaced or removed meanwhile
// (the replacement carries the `minus` on). So a fold of many notes holds the lock about as
// long as one of few.
long long SociStore::fold_pending(long long user_id, long long max_notes, long long max_postings,
                                  IndexStep& step) {
    std::vector<detail::PendingEntry> entries =
        reading("fold_read", [&] { return pending_.oldest(user_id, max_notes); });
    // A step's publish changes term_df for each term and each `minus` (a delete's entry is all
    // minus), both counted against max_postings.
    long long postings = 0;
    std::size_t n = 0;
    for (; n < entries.size() && (n == 0 || postings < max_postings); ++n)
        postings += static_cast<long long>(entries[n].terms.size() + entries[n].minus.size());
    entries.resize(n);
    if (entries.empty()) return 0;
    SegmentBuilder builder;
    for (const detail::PendingEntry& e : entries)
        if (!e.terms.empty()) builder.add(e.note, e.terms);
    using Publish = detail::Segments::Publish;
    Publish done = Publish::published;
    long long segment = 0;
    std::shared_ptr<const SegmentNotes> notes;
    if (!builder.empty()) {
        static const HiddenWriteOps kOps{"fold_begin", "fold_blocks", "fold_notes"};
        notes = write_hidden_segment(user_id, kOps, kFoldBlocksPerWrite, step, segment,
                                     [&](const std::function<void(SegmentBlock&&)>& emit) {
                                         return builder.finish(emit);
                                     });
    }
    if (on_fold_written_) on_fold_written_();
    long long folded = 0;
    step.fold_postings = postings;
    step.fold_publish_us = step_write("fold_publish", user_id, step, [&] {
        std::vector<long long> ids;
        for (const detail::PendingEntry& e : entries) ids.push_back(e.id);
        const std::vector<long long> still = pending_.still_pending(user_id, ids);
        std::vector<const detail::PendingEntry*> taken;
        std::vector<SegmentNote> dead;
        for (const detail::PendingEntry& e : entries) {
            if (std::binary_search(still.begin(), still.end(), e.id)) taken.push_back(&e);
            else if (!e.terms.empty()) dead.push_back(e.note);
        }
        if (segment != 0) done = segments_.publish(user_id, segment, {}, notes, dead);
        if (done == Publish::lost) return;
        std::vector<std::pair<std::string, int>> df;
        for (const detail::PendingEntry* e : taken) {
            for (const std::string& t : e->minus) df.emplace_back(t, -1);
            for (const SegmentTerm& t : e->terms) df.emplace_back(t.term, +1);
        }
        pending_.erase(user_id, still);
        apply_df(df);
        folded = static_cast<long long>(taken.size());
    });
    if (done == Publish::lost) {
        step.lost = true;
        step_write("fold_lost", 0, step, [&] { segments_.mark_dropping(segment); });
    }
    if (done != Publish::published) drop_segments({segment}, step);
    return folded;
}

long long SociStore::fold_rows(long long user_id, long long max_notes, long long max_postings) {
    long long u = user_id, lim = max_notes, id = 0;
    std::vector<long long> pending;  // notes whose postings are rows
    soci::statement pick = Prep(sql_, "SELECT DISTINCT note_id FROM postings WHERE user_id = :u" +
                                          dialect_->limit_clause())
                               .out(id).in(u, "u").in(lim, "lim").done();
    pick.execute();
    while (pick.fetch()) pending.push_back(id);
    detail::end_read(pick);
    if (pending.empty()) return 0;  // folded by another process since the plan was made
    long long updated = 0, created = 0, flags = 0, tlen = 0, blen = 0;
    std::string uuid, title, content, plain;
    soci::statement note =
        Prep(sql_, "SELECT n.uuid, n.updated_us, n.created_us, n.flags, n.title_len, n.body_len, "
                   "n.title, n.content, t.plain_text FROM notes n JOIN note_text t ON "
                   "t.note_id = n.id WHERE n.id = :id")
            .out(uuid).out(updated).out(created).out(flags).out(tlen).out(blen).out(title)
            .out(content).out(plain)
            .in(id, "id").done();
    detail::IndexDelta delta;  // the rows go, the segment comes
    long long folded = 0;
    for (long long note_id : pending) {
        if (folded > 0 && static_cast<long long>(delta.ops.size()) >= max_postings) break;
        ++folded;
        id = note_id;
        if (!detail::fetch_one(note)) throw std::runtime_error("note vanished while folding");
        SegmentNote n{updated, 0, 0, created, flags, tlen, blen};
        detail::uuid_halves(uuid, n.uid_hi, n.uid_lo);
        const std::vector<SegmentTerm> terms =
            detail::count_stored_terms(title, detail::decode_plain_text(content, plain));
        for (const SegmentTerm& t : terms) delta.remove(detail::PostingKey{t.term, updated, n.uid_hi, n.uid_lo});
        delta.segment.add(n, terms);
    }
    apply_index(user_id, delta);
    // Rows whose keys the notes' current terms do not name (rows written by an older analysis
    // before an upgrade) would keep their notes pending for ever: they go with their notes.
    pending.resize(static_cast<std::size_t>(folded));
    sql_ << "DELETE FROM postings WHERE user_id = :u AND note_id IN (" + detail::join_ids(pending) + ")",
        soci::use(u, "u");
    return folded;
}

}  // namespace notesd
