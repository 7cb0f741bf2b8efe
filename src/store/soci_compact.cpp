// SociStore::compact_index: the user's postings rows folded into segments, and the segments
// merged (store/segments.hpp), in one write transaction with the user locked.
#include "store/soci_stmt.hpp"
#include "store/soci_store.hpp"

namespace notesd {

using detail::Prep;

namespace {

// Notes per segment a fold writes (the import's batch size): memory stays bounded.
constexpr std::size_t kFoldNotes = 2500;

}  // namespace

IndexCompaction SociStore::compact_index(long long user_id) {
    return locked_write("compact_index", user_id, [&] {
        IndexCompaction out;
        out.folded_notes = fold_rows(user_id);
        out.merged_segments = segments_.merge(user_id, detail::kMaxSegments);
        out.segments = static_cast<long long>(segments_.count(user_id));
        return out;
    });
}

long long SociStore::fold_rows(long long user_id) {
    long long u = user_id, lim = 1, found = 0;
    soci::statement any = Prep(sql_, "SELECT user_id FROM postings WHERE user_id = :u" +
                                         dialect_->limit_clause())
                              .out(found).in(u, "u").in(lim, "lim").done();
    if (!detail::fetch_one(any)) return 0;  // every note is in a segment (or has no terms)
    // The notes not live in a segment: their postings are the rows.
    std::vector<long long> pending;
    long long id = 0, updated = 0, created = 0, flags = 0, tlen = 0, blen = 0;
    std::string uuid, title, plain;
    soci::statement keys = Prep(sql_, "SELECT id, uuid, updated_us FROM notes WHERE user_id = :u")
                               .out(id).out(uuid).out(updated).in(u, "u").done();
    keys.execute();
    while (keys.fetch()) {
        long long hi = 0, lo = 0;
        detail::uuid_halves(uuid, hi, lo);
        if (!segments_.is_live(user_id, updated, hi, lo)) pending.push_back(id);
    }
    detail::end_read(keys);
    soci::statement note =
        Prep(sql_, "SELECT n.uuid, n.updated_us, n.created_us, n.flags, n.title_len, n.body_len, "
                   "n.title, t.plain_text FROM notes n JOIN note_text t ON t.note_id = n.id "
                   "WHERE n.id = :id")
            .out(uuid).out(updated).out(created).out(flags).out(tlen).out(blen).out(title).out(plain)
            .in(id, "id").done();
    SegmentBuilder builder;
    for (std::size_t i = 0; i < pending.size(); ++i) {
        id = pending[i];
        if (!detail::fetch_one(note)) throw std::runtime_error("note vanished while folding");
        SegmentNote n{updated, 0, 0, created, flags, tlen, blen};
        detail::uuid_halves(uuid, n.uid_hi, n.uid_lo);
        std::vector<SegmentTerm> terms;
        for (detail::TermCount& t : detail::count_stored_terms(title, plain))
            terms.push_back(SegmentTerm{std::move(t.term), t.title_tf, t.body_tf, std::move(t.pos)});
        builder.add(n, std::move(terms));
        if (builder.notes() == kFoldNotes || i + 1 == pending.size()) segments_.flush(user_id, builder);
    }
    index_->drop_user_rows(user_id);
    return static_cast<long long>(pending.size());
}

}  // namespace notesd
