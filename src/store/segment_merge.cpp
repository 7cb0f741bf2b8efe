// Segments: merges in steps (segments.hpp), so that no transaction of a merge is long. The
// hidden states live in index_segments itself, which every backend has since schema 010:
// note_count 0 hides a row from every listing; live_count 0 then says unpublished (a merge
// still writing its blocks), -1 dropping (retired or abandoned, its blocks being deleted).
#include <algorithm>
#include <iterator>
#include <stdexcept>

#include "store/segments.hpp"
#include "store/soci_stmt.hpp"

namespace notesd::detail {

namespace {

constexpr long long kUnpublished = 0;
constexpr long long kDropping = -1;

// A pack's (or a term group's) blocks as a merge input's, in term order.
void append_blocks(const SegmentPack& pack, std::vector<std::pair<std::string, std::string>>& out) {
    pack.each([&](std::string_view term, const SegmentPack::Block& b) {
        out.emplace_back(std::string(term), std::string(b.data));
    });
}

}  // namespace

long long Segments::insert_unpublished(long long user_id) {
    return insert_segment(user_id, std::string(), LiveDocs(0));
}

void Segments::insert_blocks(long long user_id, long long segment_id,
                             std::vector<SegmentBlock>& blocks) {
    block_writer_.insert(user_id, segment_id, blocks);
    blocks.clear();
}

void Segments::insert_pack(long long user_id, long long segment_id,
                           const std::vector<SegmentBlock>& blocks) {
    // Under the empty term, which no real term is; last_ord -1 covers no ordinal (blocks_at).
    std::vector<SegmentBlock> row(1);
    row[0].bounds.first = 0;
    row[0].bounds.last = -1;
    row[0].data = encode_segment_pack(blocks);
    block_writer_.insert(user_id, segment_id, row);
}

SegmentInput Segments::input_of(const SegmentRef& s) {
    SegmentInput in{*s.notes, s.live, {}};
    if (s.pack) {
        append_blocks(*s.pack, in.blocks);
        return in;
    }
    long long id = s.id;
    std::string term, data;
    soci::statement st = Prep(session_, "SELECT term, data FROM segment_blocks WHERE segment_id = "
                                        ":s ORDER BY term, first_ord")
                             .out(term).out(data).in(id, "s").done();
    // The groups' keys sort before every term: their blocks, in term order too, are merged
    // with the other rows' after.
    std::vector<std::pair<std::string, std::string>> grouped;
    st.execute();
    while (st.fetch()) {
        if (!dialect_.blob_result(data)) throw std::runtime_error("index segment " + std::to_string(id) + ": malformed block");
        if (!is_group_key(term)) {
            in.blocks.emplace_back(term, std::move(data));
            continue;
        }
        SegmentPack group;
        if (!SegmentPack::decode(std::move(data), group))
            throw std::runtime_error("index segment " + std::to_string(id) + ": malformed term group");
        append_blocks(group, grouped);
    }
    end_read(st);
    if (!grouped.empty()) {
        std::vector<std::pair<std::string, std::string>> rows = std::move(in.blocks);
        in.blocks.clear();
        in.blocks.reserve(rows.size() + grouped.size());
        std::merge(std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()),
                   std::make_move_iterator(grouped.begin()), std::make_move_iterator(grouped.end()),
                   std::back_inserter(in.blocks),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    return in;
}

namespace {

// The hidden state of a segment row of the user; false when there is no such row.
bool hidden_state(soci::session& s, long long user_id, long long segment_id, long long& note_count,
                  long long& live_count) {
    soci::statement st = Prep(s, "SELECT note_count, live_count FROM index_segments WHERE id = :s "
                                 "AND user_id = :u")
                             .out(note_count).out(live_count).in(segment_id, "s").in(user_id, "u").done();
    return fetch_one(st);
}

void set_counts(soci::session& s, long long segment_id, long long note_count, long long live_count) {
    s << "UPDATE index_segments SET note_count = :n, live_count = :l WHERE id = :s",
        soci::use(note_count, "n"), soci::use(live_count, "l"), soci::use(segment_id, "s");
}

}  // namespace

void Segments::write_unpublished_notes(long long segment_id, const std::string& table) {
    long long id = segment_id;
    std::string blob = dialect_.blob_param(table);
    session_ << "UPDATE index_segment_notes SET notes = " + dialect_.blob_value(":notes") +
                    " WHERE segment_id = :s",
        soci::use(blob, "notes"), soci::use(id, "s");
}

Segments::Publish Segments::publish(long long user_id, long long segment_id,
                                    const std::vector<SegmentRef>& inputs,
                                    std::shared_ptr<const SegmentNotes> notes,
                                    const std::vector<SegmentNote>& dead) {
    WriteState& w = loaded(user_id);
    write_live_sets(w);
    long long notes_now = -1, live_now = -1;
    if (!hidden_state(session_, user_id, segment_id, notes_now, live_now) || notes_now != 0 ||
        live_now != kUnpublished)
        return Publish::lost;
    std::vector<std::size_t> at;  // each input's place in w.segments
    for (const SegmentRef& in : inputs) {
        auto it = std::find_if(w.segments.begin(), w.segments.end(),
                               [&](const SegmentRef& r) { return r.id == in.id; });
        if (it == w.segments.end()) return Publish::lost;
        at.push_back(static_cast<std::size_t>(it - w.segments.begin()));
    }
    LiveDocs live(static_cast<long long>(notes->size()));
    // Notes marked dead in an input since the merge listed it: dead in the merged segment.
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        const SegmentRef& then = inputs[k];
        const SegmentRef& now = w.segments[at[k]];
        for (long long ord = 0; ord < then.live.notes(); ++ord) {
            if (!then.live.live(ord) || now.live.live(ord)) continue;
            const SegmentNote& n = (*then.notes)[static_cast<std::size_t>(ord)];
            live.remove(find_ordinal(*notes, n.updated_us, n.uid_hi, n.uid_lo));
        }
    }
    for (const SegmentNote& n : dead) live.remove(find_ordinal(*notes, n.updated_us, n.uid_hi, n.uid_lo));
    for (const SegmentRef& in : inputs) set_counts(session_, in.id, 0, kDropping);
    std::vector<SegmentRef> kept;
    for (std::size_t i = 0; i < w.segments.size(); ++i)
        if (std::find(at.begin(), at.end(), i) == at.end()) kept.push_back(std::move(w.segments[i]));
    w.segments = std::move(kept);
    w.dirty.assign(w.segments.size(), false);
    if (live.live_count() == 0) {
        set_counts(session_, segment_id, 0, kDropping);
        return Publish::emptied;
    }
    long long n = live.notes(), l = live.live_count(), id = segment_id;
    std::string live_blob = dialect_.blob_param(live.encode());
    session_ << "UPDATE index_segments SET note_count = :n, live_count = :l, live = " +
                    dialect_.blob_value(":live") + " WHERE id = :s",
        soci::use(n, "n"), soci::use(l, "l"), soci::use(live_blob, "live"), soci::use(id, "s");
    // Not into segment_cache_ here: the transaction may still roll back. Writes use only the
    // live sets; its pack, if it has one, comes with its next listing.
    w.segments.push_back(SegmentRef{segment_id, notes, live, l, nullptr});
    w.dirty.push_back(false);
    return Publish::published;
}

std::vector<long long> Segments::mark_hidden_dropping(long long user_id) {
    long long u = user_id, id = 0;
    std::vector<long long> ids;
    soci::statement st = Prep(session_, "SELECT id FROM index_segments WHERE user_id = :u AND "
                                        "note_count = 0 ORDER BY id")
                             .out(id).in(u, "u").done();
    st.execute();
    while (st.fetch()) ids.push_back(id);
    end_read(st);
    for (long long h : ids) set_counts(session_, h, 0, kDropping);
    return ids;
}

void Segments::mark_dropping(long long segment_id) {
    long long id = segment_id, dropping = kDropping;
    session_ << "UPDATE index_segments SET live_count = :l WHERE id = :s AND note_count = 0",
        soci::use(dropping, "l"), soci::use(id, "s");
}

std::vector<std::string> Segments::block_cuts(long long segment_id, std::size_t n, std::size_t bytes) {
    long long id = segment_id, size = 0;
    std::string term;
    std::vector<std::string> cuts;
    soci::statement st = Prep(session_, "SELECT term, LENGTH(data) FROM segment_blocks WHERE "
                                        "segment_id = :s ORDER BY term, first_ord")
                             .out(term).out(size).in(id, "s").done();
    st.execute();
    std::size_t blocks = 0, run = 0;
    while (st.fetch()) {
        if ((blocks >= n || run >= bytes) && (cuts.empty() || cuts.back() != term)) {
            cuts.push_back(term);
            blocks = run = 0;
        }
        ++blocks;
        run += static_cast<std::size_t>(size);
    }
    end_read(st);
    return cuts;
}

void Segments::delete_blocks(long long segment_id, const std::string& from, const std::string& to) {
    long long id = segment_id;
    std::string a = from, b = to;
    if (b.empty())
        session_ << "DELETE FROM segment_blocks WHERE segment_id = :s AND term >= :a", soci::use(id, "s"),
            soci::use(a, "a");
    else
        session_ << "DELETE FROM segment_blocks WHERE segment_id = :s AND term >= :a AND term < :b",
            soci::use(id, "s"), soci::use(a, "a"), soci::use(b, "b");
}

void Segments::delete_dropped(long long segment_id) {
    long long id = segment_id, dropping = kDropping;
    session_ << "DELETE FROM segment_blocks WHERE segment_id = :s", soci::use(id, "s");
    session_ << "DELETE FROM index_segments WHERE id = :s AND note_count = 0 AND live_count = :l",
        soci::use(id, "s"), soci::use(dropping, "l");
    long long row = segment_id;  // its notes row goes with it, and only then
    session_ << "DELETE FROM index_segment_notes WHERE segment_id = :s AND NOT EXISTS (SELECT 1 "
                "FROM index_segments WHERE id = :t)",
        soci::use(id, "s"), soci::use(row, "t");
    segment_cache_.erase(segment_id);
}

}  // namespace notesd::detail
