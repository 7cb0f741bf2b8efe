// SociStore's merge policy steps (index/merge_policy.hpp): folding the users' postings rows into
// segments and merging segments (store/segments.hpp), each write a short transaction, so the
// user's writes (and on SQLite every writer) wait at most for a bounded amount of work.
#include <algorithm>
#include <chrono>

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
// A merge writes its blocks this many (or this many bytes) per transaction, and drops
// retired segments' blocks about this many per transaction.
constexpr std::size_t kBlocksPerWrite = 250;
constexpr std::size_t kBytesPerWrite = 512 << 10;
constexpr std::size_t kBlocksPerDelete = 250;
// Retired segments lose their blocks together, term range by term range; each transaction
// also rewrites a partly emptied page of every segment, so it takes at least this many blocks
// per segment (a 116-segment drop: 250 blocks a transaction took 82 s, 5,000 took 30 s).
constexpr std::size_t kBlocksPerDeletePerSegment = 20;
// Steps a pack runs at most after losing one to a concurrent merge.
constexpr int kLostStepsAllowed = 3;

}  // namespace

template <class F>
void SociStore::step_write(const char* op, long long lock_user_id, IndexStep& step, F&& f) {
    guarded(op, [&] {
        detail::WriteTxn tx(sql_, dialect_->begin_write(), after_commit());
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
    });
}

IndexCompaction SociStore::compact_index(long long user_id) {
    MergePolicy p;
    p.force = true;
    p.max_segments = detail::kMaxSegments;
    p.fold_batch_notes = kPackFoldNotes;
    p.fold_batch_postings = kPackFoldPostings;
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
    if (plan.fold_notes > 0)
        step_write("fold", user_id, step, [&] {
            step.folded_notes = fold_pending(user_id, plan.fold_notes, plan.fold_postings);
            if (step.folded_notes == 0)
                step.folded_notes = fold_rows(user_id, plan.fold_notes, plan.fold_postings);
        });
    else if (!plan.merge.empty())
        merge_step(user_id, plan.merge, step);
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
    if (segment_ids.empty()) return;
    const std::vector<std::string> cuts = reading("drop_segment", [&] {
        const std::size_t n = std::max(kBlocksPerDelete, kBlocksPerDeletePerSegment * segment_ids.size());
        return segments_.block_cuts(segment_ids, n, kBytesPerWrite / kBlocksPerDelete * n);
    });
    std::string from;
    for (const std::string& to : cuts) {
        step_write("drop_segment", 0, step, [&] { segments_.delete_blocks(segment_ids, from, to); });
        from = to;
    }
    step_write("drop_segment", 0, step, [&] {  // the last range goes with each segment's row
        for (long long id : segment_ids) segments_.delete_dropped(id);
    });
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
    long long merged = 0;
    step_write("merge_begin", 0, step, [&] { merged = segments_.insert_unpublished(user_id); });
    std::string table;
    {
        std::vector<SegmentInput> in = reading("merge_read", [&] {
            std::vector<SegmentInput> out;
            for (const detail::SegmentRef& r : inputs) out.push_back(segments_.input_of(r));
            return out;
        });
        std::vector<SegmentBlock> chunk;
        std::size_t bytes = 0;
        auto write_chunk = [&] {
            if (!chunk.empty())
                step_write("merge_blocks", 0, step, [&] { segments_.insert_blocks(user_id, merged, chunk); });
            bytes = 0;
        };
        table = merge_segments(in, [&](SegmentBlock&& b) {
            bytes += b.data.size() + b.term.size();
            chunk.push_back(std::move(b));
            if (chunk.size() >= kBlocksPerWrite || bytes >= kBytesPerWrite) write_chunk();
        });
        write_chunk();
    }
    auto notes = std::make_shared<SegmentNotes>();
    if (!decode_segment_notes(table, *notes)) throw std::logic_error("a merged notes table does not decode");
    step_write("merge_notes", 0, step, [&] { segments_.write_unpublished_notes(merged, table); });
    std::string().swap(table);
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

// Each entry's terms go into the new segment; term_df gains them and loses its `minus`.
long long SociStore::fold_pending(long long user_id, long long max_notes, long long max_postings) {
    std::vector<detail::PendingEntry> entries = pending_.oldest(user_id, max_notes);
    detail::IndexDelta delta;
    delta.to_segment = true;
    long long folded = 0, postings = 0;
    for (detail::PendingEntry& e : entries) {
        if (folded > 0 && postings >= max_postings) break;
        ++folded;
        postings += static_cast<long long>(e.terms.size());
        for (std::string& t : e.minus) delta.df.emplace_back(std::move(t), -1);
        for (const SegmentTerm& t : e.terms) delta.df.emplace_back(t.term, +1);
        if (!e.terms.empty()) delta.segment.add(e.note, std::move(e.terms));
        pending_.erase(e.id);
    }
    if (folded > 0) apply_index(user_id, delta);
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
    std::string uuid, title, plain;
    soci::statement note =
        Prep(sql_, "SELECT n.uuid, n.updated_us, n.created_us, n.flags, n.title_len, n.body_len, "
                   "n.title, t.plain_text FROM notes n JOIN note_text t ON t.note_id = n.id "
                   "WHERE n.id = :id")
            .out(uuid).out(updated).out(created).out(flags).out(tlen).out(blen).out(title).out(plain)
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
        std::vector<SegmentTerm> terms;
        for (detail::TermCount& t : detail::count_stored_terms(title, plain)) {
            delta.remove(detail::PostingKey{t.term, updated, n.uid_hi, n.uid_lo});
            terms.push_back(SegmentTerm{std::move(t.term), t.title_tf, t.body_tf, std::move(t.pos)});
        }
        delta.segment.add(n, std::move(terms));
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
