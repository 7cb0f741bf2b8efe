#include "store/segments.hpp"

#include <algorithm>
#include <stdexcept>

#include "index/postings_format.hpp"
#include "store/soci_stmt.hpp"

namespace notesd::detail {

// The statements with the variables they bind (SOCI binds addresses: this never moves).
struct Segments::Statements {
    Statements(soci::session& s, const Dialect& d);
    long long user_id = 0, segment_id = 0, note_count = 0, live_count = 0;
    long long first = 0, last = 0, lo = 0, hi = 0, ord = 0, lim = 1, inserted = 0;
    std::string term, notes, live, data;  // blobs in the dialect's form
    soci::statement list, notes_of, blocks, block_at, insert_segment, insert_block, set_live;
    soci::statement delete_blocks, delete_segment, segment_blocks;
};

Segments::Statements::Statements(soci::session& s, const Dialect& d)
    : list(Prep(s, "SELECT id, note_count, live_count, live FROM index_segments WHERE user_id = :u "
                   "ORDER BY id")
               .out(segment_id).out(note_count).out(live_count).out(live).in(user_id, "u").done()),
      notes_of(Prep(s, "SELECT notes FROM index_segments WHERE id = :s")
                   .out(notes).in(segment_id, "s").done()),
      // a term's blocks of one segment in ordinal (candidate) order, within an ordinal range
      blocks(Prep(s, "SELECT first_ord, last_ord, data FROM segment_blocks WHERE user_id = :u AND "
                     "term = :t AND segment_id = :s AND first_ord <= :hi AND last_ord >= :lo "
                     "ORDER BY first_ord")
                 .out(first).out(last).out(data).in(user_id, "u").in(term, "t")
                 .in(segment_id, "s").in(hi, "hi").in(lo, "lo").done()),
      // the block that holds ordinal :o if any does
      block_at(Prep(s, "SELECT first_ord, last_ord, data FROM segment_blocks WHERE user_id = :u "
                       "AND term = :t AND segment_id = :s AND first_ord <= :o ORDER BY first_ord "
                       "DESC" + d.limit_clause())
                   .out(first).out(last).out(data).in(user_id, "u").in(term, "t")
                   .in(segment_id, "s").in(ord, "o").in(lim, "lim").done()),
      insert_segment(Prep(s, "INSERT INTO index_segments (user_id, note_count, live_count, notes, "
                             "live) VALUES (:u, :n, :l, :notes, :live)")
                         .in(user_id, "u").in(note_count, "n").in(live_count, "l")
                         .in(notes, "notes").in(live, "live").returning_id(d, inserted).done()),
      insert_block(Prep(s, "INSERT INTO segment_blocks (user_id, term, segment_id, first_ord, "
                           "last_ord, data) VALUES (:u, :t, :s, :first, :last, :data)")
                       .in(user_id, "u").in(term, "t").in(segment_id, "s").in(first, "first")
                       .in(last, "last").in(data, "data").done()),
      set_live(Prep(s, "UPDATE index_segments SET live = :live, live_count = :l WHERE id = :s")
                   .in(live, "live").in(live_count, "l").in(segment_id, "s").done()),
      delete_blocks(Prep(s, "DELETE FROM segment_blocks WHERE segment_id = :s")
                        .in(segment_id, "s").done()),
      delete_segment(Prep(s, "DELETE FROM index_segments WHERE id = :s").in(segment_id, "s").done()),
      segment_blocks(Prep(s, "SELECT term, data FROM segment_blocks WHERE segment_id = :s ORDER BY "
                             "term, first_ord")
                         .out(term).out(data).in(segment_id, "s").done()) {}

namespace {

bool passes(const SegmentNote& n, const SearchFilter& f) {
    return n.updated_us >= f.updated.min_us && n.updated_us <= f.updated.max_us &&
           n.created_us >= f.created.min_us && n.created_us <= f.created.max_us &&
           (f.flags_any == 0 || (n.flags & f.flags_any) != 0);
}

TermPosting posting_of(const SegmentNote& n, const SegmentPosting& p, bool with_positions) {
    return TermPosting{n.uid_hi, n.uid_lo, n.updated_us, static_cast<int>(p.title_tf),
                       static_cast<int>(p.body_tf), static_cast<int>(n.title_len),
                       static_cast<int>(n.body_len),
                       with_positions ? std::string(p.pos) : std::string()};
}

[[noreturn]] void malformed(long long segment_id, const char* what) {
    throw std::runtime_error("index segment " + std::to_string(segment_id) + ": malformed " + what);
}

}  // namespace

Segments::Segments(soci::session& s, const Dialect& d) : session_(s), dialect_(d) {}
Segments::~Segments() = default;

Segments::Statements& Segments::st() {
    if (!st_) st_ = std::make_unique<Statements>(session_, dialect_);
    return *st_;
}

void Segments::drop_statements() {
    st_.reset();
    view_.clear();
    write_ = WriteState();  // a failed transaction rolled back whatever it had changed
}

std::shared_ptr<const std::vector<SegmentNote>> Segments::notes_of(long long segment_id) {
    auto it = notes_cache_.find(segment_id);
    if (it != notes_cache_.end()) return it->second;
    Statements& q = st();
    q.segment_id = segment_id;
    // merged away since it was listed (the servers read without a snapshot)
    if (!fetch_one(q.notes_of)) return nullptr;
    auto notes = std::make_shared<std::vector<SegmentNote>>();
    if (!dialect_.blob_result(q.notes) || !decode_segment_notes(q.notes, *notes))
        malformed(segment_id, "notes table");
    q.notes.clear();
    notes_cache_[segment_id] = notes;
    return notes;
}

std::vector<SegmentRef> Segments::of_user(long long user_id) {
    if (in_view_) {
        auto it = view_.find(user_id);
        if (it != view_.end()) return it->second;
    }
    Statements& q = st();
    q.user_id = user_id;
    std::vector<SegmentRef> rows;
    q.list.execute();
    while (q.list.fetch()) {
        SegmentRef r{q.segment_id, nullptr, LiveDocs(), q.live_count};
        if (!dialect_.blob_result(q.live) || !LiveDocs::decode(q.live, q.note_count, r.live))
            malformed(q.segment_id, "live set");
        rows.push_back(std::move(r));
    }
    end_read(q.list);
    // Segments merged away since the user's last listing leave the cache.
    std::vector<long long>& listed = listed_[user_id];
    for (long long id : listed)
        if (std::none_of(rows.begin(), rows.end(), [&](const SegmentRef& r) { return r.id == id; }))
            notes_cache_.erase(id);
    listed.clear();
    for (SegmentRef& r : rows) {
        listed.push_back(r.id);
        r.notes = notes_of(r.id);
    }
    rows.erase(std::remove_if(rows.begin(), rows.end(), [](const SegmentRef& r) { return !r.notes; }),
               rows.end());
    if (in_view_) view_[user_id] = rows;
    return rows;
}

// ---- reads ----

void Segments::read_segment_term(long long user_id, const std::string& term, const SegmentRef& s,
                                 const SearchFilter& f, long long limit, bool with_positions,
                                 const NoteKeep& keep, std::vector<TermPosting>& out) {
    const std::vector<SegmentNote>& notes = *s.notes;
    // Newest first: the notes within the updated bounds are one range of ordinals.
    const auto lo = std::partition_point(notes.begin(), notes.end(), [&](const SegmentNote& n) {
        return n.updated_us > f.updated.max_us;
    });
    const auto hi = std::partition_point(lo, notes.end(), [&](const SegmentNote& n) {
        return n.updated_us >= f.updated.min_us;
    });
    if (lo == hi) return;
    Statements& q = st();
    q.user_id = user_id;
    q.term = term;
    q.segment_id = s.id;
    q.lo = lo - notes.begin();
    q.hi = (hi - notes.begin()) - 1;
    long long taken = 0;
    bool stop = false;
    q.blocks.execute();
    while (!stop && q.blocks.fetch()) {
        if (!dialect_.blob_result(q.data)) malformed(s.id, "block");
        const bool ok = each_segment_posting(q.data, s.live.notes(), [&](const SegmentPosting& p) {
            if (p.ordinal > q.hi) return !(stop = true);
            if (p.ordinal < q.lo || !s.live.live(p.ordinal)) return true;
            const SegmentNote& n = notes[static_cast<std::size_t>(p.ordinal)];
            if (!passes(n, f) || (keep && !keep(n))) return true;
            out.push_back(posting_of(n, p, with_positions));
            return !(stop = ++taken >= limit);
        });
        if (!ok) malformed(s.id, "block");
    }
    end_read(q.blocks);
}

void Segments::term_postings(long long user_id, const std::string& term, const SearchFilter& f,
                             long long limit, bool with_positions, const NoteKeep& keep,
                             std::vector<TermPosting>& out) {
    if (limit <= 0) return;
    const std::vector<SegmentRef> segments = of_user(user_id);
    const std::size_t from = out.size();
    for (const SegmentRef& s : segments)
        read_segment_term(user_id, term, s, f, limit, with_positions, keep, out);
    if (segments.size() < 2) return;
    // each segment's run is in candidate order; together they need one sort and the limit
    std::sort(out.begin() + static_cast<std::ptrdiff_t>(from), out.end(),
              [](const TermPosting& a, const TermPosting& b) {
                  if (a.updated_us != b.updated_us) return a.updated_us > b.updated_us;
                  return a.uid_hi != b.uid_hi ? a.uid_hi > b.uid_hi : a.uid_lo > b.uid_lo;
              });
    if (out.size() - from > static_cast<std::size_t>(limit))
        out.resize(from + static_cast<std::size_t>(limit));
}

void Segments::postings_at(long long user_id, const std::string& term,
                           const std::vector<PostingNote>& notes, std::vector<TermPosting>& out) {
    if (notes.empty()) return;
    Statements& q = st();
    for (const SegmentRef& s : of_user(user_id)) {
        for (const PostingNote& n : notes) {
            const long long ord = find_ordinal(*s.notes, n.updated_us, n.uid_hi, n.uid_lo);
            if (ord < 0 || !s.live.live(ord)) continue;
            q.user_id = user_id;
            q.term = term;
            q.segment_id = s.id;
            q.ord = ord;
            q.lim = 1;
            if (!fetch_one(q.block_at) || q.last < ord) continue;  // the note lacks the term
            if (!dialect_.blob_result(q.data)) malformed(s.id, "block");
            const SegmentNote& note = (*s.notes)[static_cast<std::size_t>(ord)];
            const bool ok = each_segment_posting(q.data, s.live.notes(), [&](const SegmentPosting& p) {
                if (p.ordinal == ord) out.push_back(posting_of(note, p, true));
                return p.ordinal < ord;
            });
            if (!ok) malformed(s.id, "block");
        }
    }
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
        Statements& q = st();
        q.segment_id = s.id;
        q.segment_blocks.execute();
        while (q.segment_blocks.fetch()) {
            const bool ok = dialect_.blob_result(q.data) &&
                            each_segment_posting(q.data, s.live.notes(), [&](const SegmentPosting& p) {
                                if (s.live.live(p.ordinal))
                                    fn(q.term, (*s.notes)[static_cast<std::size_t>(p.ordinal)], p);
                                return true;
                            });
            if (!ok)
                problems.push_back("index segment " + std::to_string(s.id) + ": a malformed block of term '" +
                                   q.term + "'");
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
        write_.segments = of_user(user_id);
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
    q.notes = dialect_.blob_param(notes);
    q.live = dialect_.blob_param(live.encode());
    exec(q.insert_segment);
    q.notes.clear();
    if (!dialect_.insert_returns_id() && !session_.get_last_insert_id("index_segments", q.inserted))
        throw std::runtime_error("no id for the new row of index_segments");
    return q.inserted;
}

void Segments::insert_block(long long user_id, long long segment_id, SegmentBlock&& b) {
    Statements& q = st();
    q.user_id = user_id;
    q.segment_id = segment_id;
    q.term = std::move(b.term);
    q.first = b.bounds.first;
    q.last = b.bounds.last;
    q.data = dialect_.blob_param(b.data);
    exec(q.insert_block);
}

void Segments::flush(long long user_id, SegmentBuilder& builder) {
    if (builder.empty() && (!write_.loaded || write_.user_id != user_id)) return;  // nothing changed
    WriteState& w = loaded(user_id);
    write_live_sets(w);
    if (builder.empty()) return;
    std::vector<SegmentBlock> blocks;
    const std::string table = builder.finish([&](SegmentBlock&& b) { blocks.push_back(std::move(b)); });
    add_segment(w, user_id, table, blocks);
}

void Segments::add_segment(WriteState& w, long long user_id, const std::string& table,
                           std::vector<SegmentBlock>& blocks) {
    auto notes = std::make_shared<std::vector<SegmentNote>>();
    if (!decode_segment_notes(table, *notes)) throw std::logic_error("a new notes table does not decode");
    if (notes->empty()) return;
    const LiveDocs live(static_cast<long long>(notes->size()));
    const long long id = insert_segment(user_id, table, live);
    for (SegmentBlock& b : blocks) insert_block(user_id, id, std::move(b));
    notes_cache_[id] = notes;
    w.segments.push_back(SegmentRef{id, notes, live, live.live_count()});
    w.dirty.push_back(false);
}

void Segments::delete_segment(long long segment_id) {
    Statements& q = st();
    q.segment_id = segment_id;
    exec(q.delete_blocks);
    exec(q.delete_segment);
    notes_cache_.erase(segment_id);
}

SegmentInput Segments::input_of(const SegmentRef& s) {
    SegmentInput in{*s.notes, s.live, {}};
    Statements& q = st();
    q.segment_id = s.id;
    q.segment_blocks.execute();
    while (q.segment_blocks.fetch()) {
        if (!dialect_.blob_result(q.data)) malformed(s.id, "block");
        in.blocks.emplace_back(q.term, std::move(q.data));
    }
    end_read(q.segment_blocks);
    return in;
}

void Segments::write_live_sets(WriteState& w) {
    for (std::size_t i = 0; i < w.segments.size(); ++i)
        if (w.dirty[i]) {
            update_live(w.segments[i]);
            w.dirty[i] = false;
        }
}

long long Segments::merge(long long user_id, std::size_t max_segments) {
    WriteState& w = loaded(user_id);
    write_live_sets(w);
    std::vector<std::size_t> pick, rest;
    for (std::size_t i = 0; i < w.segments.size(); ++i) {
        const LiveDocs& l = w.segments[i].live;
        (l.live_count() * 2 < l.notes() ? pick : rest).push_back(i);  // mostly dead
    }
    // The smallest of the others join them until at most max_segments remain (the merged
    // segment counts as one).
    std::sort(rest.begin(), rest.end(), [&](std::size_t a, std::size_t b) {
        return w.segments[a].live.live_count() < w.segments[b].live.live_count();
    });
    max_segments = std::max<std::size_t>(max_segments, 1);
    for (std::size_t i = 0; i < rest.size() && rest.size() - i + (pick.empty() ? 0 : 1) > max_segments; ++i)
        pick.push_back(rest[i]);
    if (pick.empty()) return 0;
    std::vector<SegmentInput> inputs;
    for (std::size_t i : pick) inputs.push_back(input_of(w.segments[i]));
    std::vector<SegmentBlock> blocks;
    const std::string table = merge_segments(inputs, [&](SegmentBlock&& b) { blocks.push_back(std::move(b)); });
    inputs.clear();
    std::vector<SegmentRef> kept;
    for (std::size_t i = 0; i < w.segments.size(); ++i) {
        if (std::find(pick.begin(), pick.end(), i) == pick.end()) kept.push_back(std::move(w.segments[i]));
        else delete_segment(w.segments[i].id);
    }
    w.segments = std::move(kept);
    w.dirty.assign(w.segments.size(), false);
    add_segment(w, user_id, table, blocks);
    return static_cast<long long>(pick.size());
}

void SegmentBatch::add(const PostingKey& key, long long created_us, long long flags, long long tfs,
                       long long lens, const std::string& pos) {
    auto& [note, terms] = notes_[{key.updated_us, {key.uid_hi, key.uid_lo}}];
    note = SegmentNote{key.updated_us, key.uid_hi, key.uid_lo, created_us, flags,
                       pair_first(lens), pair_second(lens)};
    terms.push_back(SegmentTerm{key.term, pair_first(tfs), pair_second(tfs), pos});
}

void SegmentBatch::write(long long user_id, Segments& segments) {
    SegmentBuilder builder;
    for (auto& [key, note] : notes_) builder.add(note.first, std::move(note.second));
    notes_.clear();
    segments.flush(user_id, builder);
}

}  // namespace notesd::detail
