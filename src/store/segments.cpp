#include "store/segments.hpp"

#include <algorithm>
#include <iterator>
#include <set>
#include <stdexcept>

#include "index/search_index.hpp"
#include "store/soci_stmt.hpp"
#include "store/sqlite_direct.hpp"

namespace notesd::detail {

// The statements with the variables they bind (SOCI binds addresses: this never moves).
struct Segments::Statements {
    Statements(soci::session& s, const Dialect& d);
    long long user_id = 0, segment_id = 0, note_count = 0, live_count = 0;
    long long inserted = 0;
    std::string term, notes, live, data;  // blobs in the dialect's form
    SearchCorpus corpus;
    long long has_rows = 0, has_pending = 0;
    soci::indicator segment_listed = soci::i_ok, live_listed = soci::i_ok;
    soci::statement list, head, insert_segment, insert_notes, set_live;
    soci::statement delete_blocks, segment_blocks;
};

Segments::Statements::Statements(soci::session& s, const Dialect& d)
    : list(Prep(s, "SELECT id, note_count, live_count, live FROM index_segments WHERE user_id = :u "
                   "AND note_count > 0 ORDER BY id")
               .out(segment_id).out(note_count).out(live_count).out(live).in(user_id, "u").done()),
      // The users row with its segments (none: one row of NULLs); the EXISTS are evaluated
      // once (uncorrelated with the segment). Sorted by the caller: an ORDER BY made MariaDB
      // sort the live sets (blobs) through an on-disk temporary table, 0.4 ms instead of 0.1.
      head(Prep(s, "SELECT u.note_count, u.title_tokens, u.body_tokens, CASE WHEN EXISTS (SELECT "
                   "1 FROM postings p WHERE p.user_id = u.id) THEN 1 ELSE 0 END, CASE WHEN EXISTS "
                   "(SELECT 1 FROM index_pending e WHERE e.user_id = u.id) THEN 1 ELSE 0 END, s.id, "
                   "s.note_count, s.live_count, s.live FROM users u LEFT JOIN index_segments s ON "
                   "s.user_id = u.id AND s.note_count > 0 WHERE u.id = :u")
               .out(corpus.notes).out(corpus.title_tokens).out(corpus.body_tokens).out(has_rows)
               .out(has_pending).out(segment_id, segment_listed).out(note_count, segment_listed)
               .out(live_count, segment_listed).out(live, live_listed).in(user_id, "u").done()),
      insert_segment(Prep(s, "INSERT INTO index_segments (user_id, note_count, live_count, live) "
                             "VALUES (:u, :n, :l, " + d.blob_value(":live") + ")")
                         .in(user_id, "u").in(note_count, "n").in(live_count, "l")
                         .in(live, "live").returning_id(d, inserted).done()),
      insert_notes(Prep(s, "INSERT INTO index_segment_notes (segment_id, notes) VALUES (:s, " +
                           d.blob_value(":notes") + ")")
                       .in(inserted, "s").in(notes, "notes").done()),
      set_live(Prep(s, "UPDATE index_segments SET live = " + d.blob_value(":live") +
                       ", live_count = :l WHERE id = :s")
                   .in(live, "live").in(live_count, "l").in(segment_id, "s").done()),
      delete_blocks(Prep(s, "DELETE FROM segment_blocks WHERE segment_id = :s")
                        .in(segment_id, "s").done()),
      segment_blocks(Prep(s, "SELECT term, data FROM segment_blocks WHERE segment_id = :s ORDER BY "
                             "term, first_ord")
                         .out(term).out(data).in(segment_id, "s").done()) {}

namespace {

[[noreturn]] void malformed(long long segment_id, const char* what) {
    throw std::runtime_error("index segment " + std::to_string(segment_id) + ": malformed " + what);
}

}  // namespace

Segments::Segments(soci::session& s, const Dialect& d, std::unique_ptr<SegmentBlockReader> blocks)
    : session_(s), dialect_(d), blocks_(std::move(blocks)), block_writer_(s, d) {}
Segments::~Segments() = default;

Segments::Statements& Segments::st() {
    if (!st_) st_ = std::make_unique<Statements>(session_, dialect_);
    return *st_;
}

void Segments::drop_statements() {
    st_.reset();
    blocks_->drop_statements();
    block_writer_.drop_statements();
    view_.clear();
    view_rows_.clear();
    view_heads_.clear();
    write_ = WriteState();  // a failed transaction rolled back whatever it had changed
}

std::shared_ptr<const SegmentNotes> Segments::notes_of(long long segment_id,
                                                       std::shared_ptr<const SegmentPack>& pack) {
    auto it = segment_cache_.find(segment_id);
    if (it != segment_cache_.end()) {
        pack = it->second.pack;
        return it->second.notes;
    }
    // The pack first: a segment dropped between the two reads then has no notes table and is
    // left out, never taken for one whose blocks are rows.
    pack.reset();
    if (std::optional<std::string> bytes = blocks_->pack(segment_id)) {
        auto p = std::make_shared<SegmentPack>();
        if (!SegmentPack::decode(std::move(*bytes), *p)) malformed(segment_id, "pack");
        pack = std::move(p);
    }
    // merged away since it was listed (the servers read without a snapshot)
    const std::optional<std::string_view> table = blocks_->notes_table(segment_id);
    if (!table) return nullptr;
    auto notes = std::make_shared<SegmentNotes>();
    if (!decode_segment_notes(*table, *notes)) malformed(segment_id, "notes table");
    segment_cache_[segment_id] = Immutable{notes, pack};
    return notes;
}

std::vector<SegmentRef> Segments::of_user(long long user_id) {
    if (in_view_) {
        // the view's first listing of the user
        if (!view_heads_.count(user_id)) return view_[user_id] = list_with_head(user_id);
        auto it = view_.find(user_id);
        if (it != view_.end()) return it->second;
    }
    std::vector<SegmentRef> rows = list(user_id);
    if (in_view_) view_[user_id] = rows;
    return rows;
}

const Segments::ViewHead* Segments::view_head(long long user_id) {
    if (!in_view_) return nullptr;
    if (!view_heads_.count(user_id)) of_user(user_id);
    return &view_heads_[user_id];
}

std::vector<SegmentRef> Segments::list(long long user_id) {
    Statements& q = st();
    q.user_id = user_id;
    std::vector<SegmentRef> rows;
    q.list.execute();
    while (q.list.fetch()) add_listed(rows, true);
    end_read(q.list);
    remember_listing(user_id, rows);
    return rows;
}

std::vector<SegmentRef> Segments::list_with_head(long long user_id) {
    Statements& q = st();
    q.user_id = user_id;
    q.corpus = SearchCorpus{};
    q.has_rows = q.has_pending = 0;
    std::vector<SegmentRef> rows;
    q.head.execute();
    while (q.head.fetch())
        if (q.segment_listed == soci::i_ok) add_listed(rows, q.live_listed == soci::i_ok);
    end_read(q.head);
    std::sort(rows.begin(), rows.end(), [](const SegmentRef& a, const SegmentRef& b) { return a.id < b.id; });
    remember_listing(user_id, rows);
    view_heads_[user_id] = ViewHead{q.corpus, q.has_pending != 0};  // once read whole
    view_rows_[user_id] = q.has_rows != 0;
    return rows;
}

void Segments::add_listed(std::vector<SegmentRef>& rows, bool has_live) {
    Statements& q = st();
    SegmentRef r{q.segment_id, nullptr, LiveDocs(), q.live_count, nullptr};  // notes_of fills both
    if (!has_live || !dialect_.blob_result(q.live) ||
        !LiveDocs::decode(q.live, q.note_count, r.live))
        malformed(q.segment_id, "live set");
    rows.push_back(std::move(r));
}

void Segments::remember_listing(long long user_id, std::vector<SegmentRef>& rows) {
    // Segments merged away since the user's last listing leave the cache.
    std::vector<long long>& listed = listed_[user_id];
    for (long long id : listed)
        if (std::none_of(rows.begin(), rows.end(), [&](const SegmentRef& r) { return r.id == id; })) {
            segment_cache_.erase(id);
            block_cache_.forget_segment(id);
        }
    listed.clear();
    for (SegmentRef& r : rows) {
        listed.push_back(r.id);
        r.notes = notes_of(r.id, r.pack);
    }
    rows.erase(std::remove_if(rows.begin(), rows.end(), [](const SegmentRef& r) { return !r.notes; }),
               rows.end());
}

// ---- reads ----

namespace {

// One segment's part of a term's postings: the ordinals within the updated bounds (newest
// first, so one range), and what was read.
struct SegmentRun {
    const SegmentRef* segment = nullptr;
    long long first = 0, last = -1, taken = 0;
    bool done = false;
    std::vector<TermPosting> postings;
};

SegmentRun run_of(const SegmentRef& s, const SearchFilter& f) {
    const SegmentNotes& notes = *s.notes;
    const auto lo = std::partition_point(notes.begin(), notes.end(), [&](const SegmentNote& n) {
        return n.updated_us > f.updated.max_us;
    });
    const auto hi = std::partition_point(lo, notes.end(), [&](const SegmentNote& n) {
        return n.updated_us >= f.updated.min_us;
    });
    SegmentRun r;
    r.segment = &s;
    r.first = lo - notes.begin();
    r.last = (hi - notes.begin()) - 1;
    r.done = lo == hi;
    return r;
}

}  // namespace

std::vector<TermPosting> merge_rows_and_segments(std::vector<TermPosting> rows,
                                                 std::vector<TermPosting> seg, long long limit) {
    if (seg.empty() || rows.empty()) {
        std::vector<TermPosting>& out = seg.empty() ? rows : seg;
        if (out.size() > static_cast<std::size_t>(limit)) out.resize(static_cast<std::size_t>(limit));
        return std::move(out);
    }
    // Only the rows' notes can repeat, and the rows are few (writes since the last compact).
    std::set<std::pair<long long, long long>> in_rows, seen;
    for (const TermPosting& p : rows) in_rows.emplace(p.uid_hi, p.uid_lo);
    std::vector<TermPosting> out;
    out.reserve(rows.size() + seg.size());
    std::merge(std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()),
               std::make_move_iterator(seg.begin()), std::make_move_iterator(seg.end()),
               std::back_inserter(out), candidate_before);
    out.erase(std::remove_if(out.begin(), out.end(),
                             [&](const TermPosting& p) {
                                 const std::pair<long long, long long> k{p.uid_hi, p.uid_lo};
                                 return in_rows.count(k) && !seen.insert(k).second;
                             }),
              out.end());
    if (out.size() > static_cast<std::size_t>(limit)) out.resize(static_cast<std::size_t>(limit));
    return out;
}

namespace {

// Decodes one block of the run's segment into the run's postings, until the run has `limit`;
// false when the block is malformed.
bool read_block(SegmentRun& r, std::string_view data, const SearchFilter& f, long long limit,
                bool with_positions, const NoteKeep& keep) {
    if (r.done) return true;
    const SegmentRef& s = *r.segment;
    return each_segment_posting(data, s.live.notes(), [&](const SegmentPosting& p) {
        if (p.ordinal > r.last) return !(r.done = true);
        if (p.ordinal < r.first || !s.live.live(p.ordinal)) return true;
        const SegmentNote& n = (*s.notes)[static_cast<std::size_t>(p.ordinal)];
        if (!passes_filter(n, f) || (keep && !keep(n))) return true;
        r.postings.push_back(segment_posting(n, p, with_positions));
        return !(r.done = ++r.taken >= limit);
    });
}

// Reads the term's postings of the runs' segments, each run until it has `limit`. A block of
// a segment the runs lack (one committed since the listing) is left out, or with
// `stop_at_unknown` ends the read: false then.
bool read_runs(SegmentBlockReader& blocks, long long user_id, const std::string& term,
               const SearchFilter& f, long long limit, bool with_positions, const NoteKeep& keep,
               bool stop_at_unknown, std::vector<SegmentRun>& runs) {
    SegmentRun* r = nullptr;
    bool ok = true, unknown = false;
    // One statement for every segment; each decodes until it has `limit` postings.
    const bool read = blocks.blocks(user_id, term, [&](long long segment_id, std::string_view data) {
        if (!r || r->segment->id != segment_id) {
            r = nullptr;
            for (SegmentRun& x : runs)
                if (x.segment->id == segment_id) r = &x;
            if (!r) return !(unknown = stop_at_unknown);
        }
        if (!data.empty()) return ok = read_block(*r, data, f, limit, with_positions, keep);
        if (!r->segment->pack) return ok = false;  // a pack's row, of a segment listed without one
        for (const SegmentPack::Block& b : r->segment->pack->term_blocks(term))
            if (!(ok = read_block(*r, b.data, f, limit, with_positions, keep))) break;
        return ok;
    });
    if (!read || !ok) malformed(r ? r->segment->id : 0, "block");
    return !unknown;
}

}  // namespace

void Segments::term_postings(long long user_id, const std::string& term, const SearchFilter& f,
                             long long limit, bool with_positions, const NoteKeep& keep,
                             std::vector<TermPosting>& out) {
    if (limit <= 0) return;
    std::vector<SegmentRef> segments;
    std::vector<SegmentRun> runs;
    // In a snapshot the listing is exact and its segments' blocks never change: from the cache.
    if (cached_reads()) {
        segments = of_user(user_id);
        std::vector<long long> ids;
        for (const SegmentRef& seg : segments) {
            runs.push_back(run_of(seg, f));
            ids.push_back(seg.id);
        }
        const std::vector<std::shared_ptr<const CachedTermBlocks>> blocks =
            cached_blocks(user_id, term, ids);
        for (std::size_t i = 0; i < runs.size(); ++i)
            for (const CachedBlock& b : *blocks[i])
                if (!read_block(runs[i], b.data, f, limit, with_positions, keep))
                    malformed(runs[i].segment->id, "block");
    } else {
        // A listing that misses a segment the blocks name is read again, up to twice; the
        // last one leaves out what was committed after it. Even a listing made just now can
        // miss one: on a server the listing and the blocks are two statements, and a merge
        // published between them retires the listed segments (their blocks are no longer
        // read) for one the listing lacks, so leaving that one out would lose the term's
        // postings of the merged notes.
        for (int attempt = 0;; ++attempt) {
            const bool fresh = attempt > 0 || !in_view_ || !view_.count(user_id);
            segments = of_user(user_id);
            if (segments.empty() && fresh) return;
            runs.clear();
            for (const SegmentRef& s : segments) runs.push_back(run_of(s, f));
            if (read_runs(*blocks_, user_id, term, f, limit, with_positions, keep, attempt < 2, runs))
                break;
            view_.erase(user_id);
            view_rows_.erase(user_id);
        }
    }
    // Each run is in candidate order: merged pairwise, each cut to the limit.
    std::vector<TermPosting> merged;
    for (SegmentRun& run : runs) {
        if (run.postings.empty()) continue;
        if (merged.empty()) {
            merged.swap(run.postings);
            continue;
        }
        std::vector<TermPosting> next;
        next.reserve(std::min(merged.size() + run.postings.size(), static_cast<std::size_t>(limit)));
        auto a = merged.begin(), b = run.postings.begin();
        while (next.size() < static_cast<std::size_t>(limit) &&
               (a != merged.end() || b != run.postings.end()))
            next.push_back(std::move(b == run.postings.end() || (a != merged.end() && candidate_before(*a, *b)) ? *a++ : *b++));
        merged.swap(next);
    }
    if (out.empty()) out.swap(merged);
    else out.insert(out.end(), std::make_move_iterator(merged.begin()), std::make_move_iterator(merged.end()));
}

std::vector<PostingNote> Segments::postings_at(long long user_id, const std::string& term,
                                               const std::vector<PostingNote>& notes,
                                               std::vector<TermPosting>& out) {
    if (notes.empty()) return {};
    // Outside a snapshot a merge since the view's listing would leave its notes without
    // postings here, unnoticed (term_postings would see the new segment's blocks): listed anew.
    const std::vector<SegmentRef> segments =
        in_view_ && !snapshot_ ? (view_[user_id] = list(user_id)) : of_user(user_id);
    auto before = [](const BlockKey& a, const BlockKey& b) {
        return a.segment_id != b.segment_id ? a.segment_id < b.segment_id : a.ord < b.ord;
    };
    std::vector<BlockKey> keys;  // each note is live in one segment at most
    std::vector<PostingNote> rest;
    for (const PostingNote& n : notes) {
        bool live = false;
        for (const SegmentRef& s : segments) {
            const long long ord = find_ordinal(*s.notes, n.updated_us, n.uid_hi, n.uid_lo);
            if (ord >= 0 && s.live.live(ord)) {
                keys.push_back(BlockKey{s.id, ord});
                live = true;
                break;
            }
        }
        if (!live) rest.push_back(n);
    }
    if (keys.empty()) return rest;
    std::sort(keys.begin(), keys.end(), before);
    long long bad = 0;
    auto read = [&](long long id, long long first, long long last, std::string_view data) {
        auto at = std::lower_bound(keys.begin(), keys.end(), BlockKey{id, first}, before);
        const auto end = std::upper_bound(at, keys.end(), BlockKey{id, last}, before);
        const auto s = std::find_if(segments.begin(), segments.end(),
                                    [&](const SegmentRef& r) { return r.id == id; });
        if (at == end || s == segments.end() || bad) return;  // the block's keys lack the term
        const bool ok = each_segment_posting(data, s->live.notes(), [&](const SegmentPosting& p) {
            while (at != end && at->ord < p.ordinal) ++at;
            if (at == end) return false;
            if (at->ord == p.ordinal)
                out.push_back(segment_posting((*s->notes)[static_cast<std::size_t>(p.ordinal)], p, true));
            return true;
        });
        if (!ok) bad = id;
    };
    if (cached_reads()) {
        std::vector<long long> ids;
        for (const BlockKey& k : keys)
            if (ids.empty() || ids.back() != k.segment_id) ids.push_back(k.segment_id);
        const std::vector<std::shared_ptr<const CachedTermBlocks>> blocks =
            cached_blocks(user_id, term, ids);
        // As blocks_at: each block holding a key's ordinal once, by segment and first ordinal.
        auto key = keys.begin();
        for (std::size_t i = 0; i < ids.size(); ++i) {
            while (key->segment_id < ids[i]) ++key;  // ids are the keys' segments
            for (const CachedBlock& b : *blocks[i]) {
                while (key != keys.end() && key->segment_id == ids[i] && key->ord < b.first) ++key;
                if (key == keys.end() || key->segment_id != ids[i]) break;
                if (key->ord <= b.last) read(ids[i], b.first, b.last, b.data);
            }
        }
    } else {
        // Packed segments' blocks are in memory; the other keys' blocks are rows.
        std::vector<BlockKey> row_keys;
        long long packed_read = 0;  // keys come by segment: a packed one's blocks once
        for (const BlockKey& k : keys) {
            const auto s = std::find_if(segments.begin(), segments.end(),
                                        [&](const SegmentRef& r) { return r.id == k.segment_id; });
            if (!s->pack) {
                row_keys.push_back(k);
            } else if (packed_read != s->id) {
                packed_read = s->id;
                for (const SegmentPack::Block& b : s->pack->term_blocks(term)) read(s->id, b.first, b.last, b.data);
            }
        }
        if (!row_keys.empty()) blocks_->blocks_at(user_id, term, row_keys, read);
    }
    if (bad) malformed(bad, "block");
    return rest;
}

std::vector<std::shared_ptr<const CachedTermBlocks>> Segments::cached_blocks(
    long long user_id, const std::string& term, const std::vector<long long>& segment_ids) {
    std::vector<std::shared_ptr<const CachedTermBlocks>> out;
    std::vector<long long> missing;
    std::map<long long, CachedTermBlocks> read;
    for (long long id : segment_ids) {
        out.push_back(block_cache_.find(id, term));
        if (out.back()) continue;
        read[id];  // a segment without the term keeps that too
        const auto seg = segment_cache_.find(id);  // listed: every id has its entry
        if (seg == segment_cache_.end() || !seg->second.pack) {
            missing.push_back(id);
            continue;
        }
        for (const SegmentPack::Block& b : seg->second.pack->term_blocks(term))
            read[id].push_back(CachedBlock{b.first, b.last, std::string(b.data)});
    }
    if (read.empty()) return out;
    if (!missing.empty())
        blocks_->blocks_in(user_id, term, missing,
                           [&](long long id, long long first, long long last, std::string_view data) {
                               read[id].push_back(CachedBlock{first, last, std::string(data)});
                           });
    for (std::size_t i = 0; i < segment_ids.size(); ++i)
        if (!out[i]) out[i] = block_cache_.put(segment_ids[i], term, std::move(read[segment_ids[i]]));
    return out;
}

void Segments::each_posting(long long user_id,
                            const std::function<void(const std::string&, const SegmentNote&,
                                                     const SegmentPosting&)>& fn,
                            std::vector<std::string>& problems) {
    for (const SegmentRef& s : of_user(user_id)) {
        if (s.live.live_count() != s.stored_live_count)
            problems.push_back("index segment " + std::to_string(s.id) + ": live count " +
                               std::to_string(s.stored_live_count) + ", its live set holds " +
                               std::to_string(s.live.live_count()));
        const auto each_block = [&](const std::string& term, std::string_view data) {
            const bool ok = each_segment_posting(data, s.live.notes(), [&](const SegmentPosting& p) {
                if (s.live.live(p.ordinal)) fn(term, (*s.notes)[static_cast<std::size_t>(p.ordinal)], p);
                return true;
            });
            if (!ok)
                problems.push_back("index segment " + std::to_string(s.id) + ": a malformed block of term '" +
                                   term + "'");
        };
        Statements& q = st();
        q.segment_id = s.id;
        q.segment_blocks.execute();
        while (q.segment_blocks.fetch()) {
            if (!dialect_.blob_result(q.data)) {
                problems.push_back("index segment " + std::to_string(s.id) + ": a malformed block of term '" +
                                   q.term + "'");
            } else if (!q.term.empty() && !is_group_key(q.term)) {
                each_block(q.term, q.data);
            } else {
                // A pack ('') or a term group, in the pack format; a pack read again from the
                // row, not the copy kept since the listing.
                const bool group = !q.term.empty();
                SegmentPack pack;
                if ((!group && !s.pack) || !SegmentPack::decode(q.data, pack)) {
                    problems.push_back("index segment " + std::to_string(s.id) +
                                       (group ? ": a malformed term group" : ": a malformed pack"));
                    continue;
                }
                pack.each([&](std::string_view term, const SegmentPack::Block& b) {
                    each_block(std::string(term), b.data);
                });
            }
        }
        end_read(q.segment_blocks);
    }
}

// ---- writes ----

void Segments::begin_write(long long user_id) {
    write_ = WriteState();
    write_.user_id = user_id;
}

Segments::WriteState& Segments::loaded(long long user_id) {
    if (write_.user_id != user_id || !write_.loaded) {
        write_ = WriteState();
        write_.user_id = user_id;
        write_.segments = list(user_id);
        write_.dirty.assign(write_.segments.size(), false);
        write_.loaded = true;
    }
    return write_;
}

bool Segments::is_live(long long user_id, long long updated_us, long long uid_hi, long long uid_lo) {
    for (const SegmentRef& s : loaded(user_id).segments) {
        const long long ord = find_ordinal(*s.notes, updated_us, uid_hi, uid_lo);
        if (ord >= 0 && s.live.live(ord)) return true;
    }
    return false;
}

bool Segments::remove_note(long long user_id, long long updated_us, long long uid_hi,
                           long long uid_lo) {
    WriteState& w = loaded(user_id);
    for (std::size_t i = 0; i < w.segments.size(); ++i) {
        const long long ord = find_ordinal(*w.segments[i].notes, updated_us, uid_hi, uid_lo);
        if (ord >= 0 && w.segments[i].live.remove(ord)) {
            w.dirty[i] = true;
            return true;
        }
    }
    return false;
}

void Segments::update_live(SegmentRef& s) {
    Statements& q = st();
    q.segment_id = s.id;
    q.live = dialect_.blob_param(s.live.encode());
    q.live_count = s.live.live_count();
    exec(q.set_live);
    s.stored_live_count = q.live_count;
}

long long Segments::insert_segment(long long user_id, const std::string& notes, const LiveDocs& live) {
    Statements& q = st();
    q.user_id = user_id;
    q.note_count = live.notes();
    q.live_count = live.live_count();
    q.live = dialect_.blob_param(live.encode());
    exec(q.insert_segment);
    if (!dialect_.insert_returns_id() && !session_.get_last_insert_id("index_segments", q.inserted))
        throw std::runtime_error("no id for the new row of index_segments");
    q.notes = dialect_.blob_param(notes);  // its own row (schema 014): a live set's update skips it
    exec(q.insert_notes);
    q.notes.clear();
    return q.inserted;
}

void Segments::flush(long long user_id, SegmentBuilder& builder) {
    if (builder.empty() && (!write_.loaded || write_.user_id != user_id)) return;  // nothing changed
    WriteState& w = loaded(user_id);
    write_live_sets(w);
    if (builder.empty()) return;
    std::vector<SegmentBlock> blocks;
    blocks.reserve(builder.terms());
    const std::string table = builder.finish([&](SegmentBlock&& b) { blocks.push_back(std::move(b)); });
    add_segment(w, user_id, table, blocks);
}

void Segments::add_segment(WriteState& w, long long user_id, const std::string& table,
                           std::vector<SegmentBlock>& blocks) {
    auto notes = std::make_shared<SegmentNotes>();
    if (!decode_segment_notes(table, *notes)) throw std::logic_error("a new notes table does not decode");
    if (notes->empty()) return;
    const LiveDocs live(static_cast<long long>(notes->size()));
    const long long id = insert_segment(user_id, table, live);
    std::vector<SegmentBlock> rows = group_terms(std::move(blocks));  // segment_pack.hpp
    block_writer_.insert(user_id, id, rows);
    // Not into segment_cache_: if this transaction rolls back, SQLite hands the id out again.
    w.segments.push_back(SegmentRef{id, notes, live, live.live_count(), nullptr});  // rows, no pack
    w.dirty.push_back(false);
}

void Segments::write_live_sets(WriteState& w) {
    for (std::size_t i = 0; i < w.segments.size(); ++i)
        if (w.dirty[i]) {
            update_live(w.segments[i]);
            w.dirty[i] = false;
        }
}

}  // namespace notesd::detail
