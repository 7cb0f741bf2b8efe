// The exact totals of filtered note lists (schema 011's note_time_counts, time_counts.cpp): the
// cover of a time range by buckets (pure), and on every backend of the run the totals after
// random inserts, updates, created_at changes, trash, restore and deletes against a brute-force
// count, with bounds on bucket boundaries, one microsecond either side, empty and unbounded
// ranges; the migration's fill against the write path's rows (check_user recounts in C++).
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include <soci/soci.h>

#include "store/migrations.hpp"
#include "store/store.hpp"
#include "store/time_buckets.hpp"
#include "base/util.hpp"
#include "store_fixture.hpp"

using namespace notesd;
using notesd::detail::cover_time_range;
using notesd::detail::kTimeCountShifts;
using notesd::detail::TimeCover;
using notesd::test::StoreFixture;

namespace {

// Times a note or a bound may take: every level's bucket boundaries near a base time (and near
// zero, below it, and the int64 ends), one microsecond either side.
std::vector<long long> edge_times() {
    std::vector<long long> out = {kMinTime, kMinTime + 1, kMaxTime - 1, kMaxTime, -1, 0, 1};
    const long long base = 6 * (1LL << 48);  // July 2023, a boundary of every level
    for (int shift : kTimeCountShifts)
        for (long long k : {-17, -16, -15, -1, 0, 1, 2, 15, 16, 17})
            for (long long around : {base, 0LL})
                for (long long d : {-1, 0, 1}) out.push_back(around + k * (1LL << shift) + d);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

// Where t falls in a cover: the number of its pieces holding t.
int pieces_holding(const TimeCover& c, long long t) {
    int n = 0;
    for (int i = 0; i < TimeCover::kSpans; ++i) {
        const int shift = kTimeCountShifts[TimeCover::level_of(i)];
        const long long b = detail::time_bucket(t, shift);
        if (!c.spans[i].empty() && b >= c.spans[i].first && b <= c.spans[i].last) ++n;
    }
    for (const detail::TimeSpan& e : c.edges)
        if (!e.empty() && t >= e.min_us && t <= e.max_us) ++n;
    return n;
}

// The notes a test expects live and in the trash, kept in step with the store's writes.
struct ExpectedNotes {
    std::mt19937_64& rng;
    std::map<std::string, NoteInput> live, trashed;
    static std::string any_of(std::mt19937_64& rng, const std::map<std::string, NoteInput>& m) {
        auto it = m.begin();
        std::advance(it, static_cast<long>(rng() % m.size()));
        return it->first;
    }
    std::string any_live() { return any_of(rng, live); }
    void trash(Store& s, long long u, const std::string& id) {
        BOOST_REQUIRE(s.trash_note(u, id, 1000));
        trashed[id] = live[id];
        live.erase(id);
    }
    void erase(Store& s, long long u, const std::string& id) {
        BOOST_REQUIRE(s.delete_note(u, id));
        live.erase(id);
    }
    void restore_some(Store& s, long long u, int n) {
        for (int i = 0; i < n && !trashed.empty(); ++i) {
            const std::string id = any_of(rng, trashed);
            BOOST_REQUIRE(s.restore_note(u, id));
            live[id] = trashed[id];
            trashed.erase(id);
        }
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(time_buckets)

BOOST_AUTO_TEST_CASE(buckets_floor_negative_times) {
    BOOST_CHECK_EQUAL(detail::time_bucket(0, 32), 0);
    BOOST_CHECK_EQUAL(detail::time_bucket(-1, 32), -1);
    BOOST_CHECK_EQUAL(detail::time_bucket((1LL << 32) - 1, 32), 0);
    BOOST_CHECK_EQUAL(detail::time_bucket(-(1LL << 32), 32), -1);
    BOOST_CHECK_EQUAL(detail::time_bucket(-(1LL << 32) - 1, 32), -2);
    BOOST_CHECK_EQUAL(detail::time_bucket(kMinTime, 32), -(1LL << 31));
    BOOST_CHECK_EQUAL(detail::time_bucket(kMaxTime, 48), (1LL << 15) - 1);
    BOOST_CHECK_EQUAL(detail::bucket_first_us(-(1LL << 31), 32), kMinTime);
    BOOST_CHECK_EQUAL(detail::bucket_last_us((1LL << 31) - 1, 32), kMaxTime);
}

// Every time inside the range lies in exactly one piece of its cover, every time outside in
// none; edges are shorter than a finest bucket and a level below the top has at most 30 buckets
// (15 on each side of the coarser ones, or up to 30 around one coarser boundary).
BOOST_AUTO_TEST_CASE(cover_is_an_exact_partition) {
    const std::vector<long long> ts = edge_times();
    std::mt19937_64 rng(11);
    for (std::size_t i = 0; i < ts.size(); ++i)
        for (std::size_t j = 0; j < ts.size(); j += 1 + rng() % 3) {
            const long long a = ts[i], b = ts[j];
            const TimeCover c = cover_time_range(a, b);
            for (const detail::TimeSpan& e : c.edges)
                if (!e.empty()) BOOST_CHECK_LT(static_cast<unsigned long long>(e.max_us) - e.min_us, 1ULL << 32);
            for (int k = 0; k + 1 < TimeCover::kSpans; k += 2) {
                long long buckets = 0;
                for (const detail::BucketSpan& s : {c.spans[k], c.spans[k + 1]})
                    if (!s.empty()) buckets += s.last - s.first + 1;
                BOOST_CHECK_LE(buckets, 30);
            }
            for (long long t : ts) {
                const int want = a <= t && t <= b ? 1 : 0;
                if (pieces_holding(c, t) != want)
                    BOOST_ERROR("cover of [" << a << ", " << b << "] holds " << t << " "
                                             << pieces_holding(c, t) << " times");
            }
        }
    // nothing for an empty range
    const TimeCover none = cover_time_range(5, 4);
    BOOST_CHECK_EQUAL(pieces_holding(none, 4) + pieces_holding(none, 5), 0);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(store)

// Random writes through every write path, then random and boundary filters: count_notes equals
// the brute-force count, and check_user finds the maintained rows exact.
BOOST_FIXTURE_TEST_CASE(filtered_totals_equal_brute_force, StoreFixture) {
    const long long u = user("totals");
    const std::vector<long long> ts = edge_times();
    std::vector<long long> note_times;  // within what a note may carry (not the int64 ends)
    for (long long t : ts)
        if (t > kMinTime + 1 && t < kMaxTime - 1) note_times.push_back(t);
    std::mt19937_64 rng(19);
    auto pick = [&](const std::vector<long long>& v) { return v[rng() % v.size()]; };
    ExpectedNotes notes{rng, {}, {}};
    std::map<std::string, NoteInput>& live = notes.live;
    auto fresh = [&](NoteInput n) {
        n.created_us = pick(note_times);
        n.updated_us = rng() % 4 ? std::max(n.created_us, pick(note_times)) : n.created_us;
        n.flags = static_cast<int>(rng() % 16);
        return n;
    };
    auto expected = [&](const NoteFilter& f) {
        long long n = 0;
        for (const auto& [id, x] : live)
            if (x.created_us >= f.created.min_us && x.created_us <= f.created.max_us &&
                x.updated_us >= f.updated.min_us && x.updated_us <= f.updated.max_us &&
                (f.flags_any == 0 || (x.flags & f.flags_any)))
                ++n;
        return n;
    };
    auto bound = [&](TimeRange& r) {
        const int kind = static_cast<int>(rng() % 4);  // none, min, max, both
        if (kind & 1) r.min_us = pick(ts);
        if (kind & 2) r.max_us = pick(ts);
    };
    auto compare = [&](const NoteFilter& f) {
        const long long want = expected(f), got = store->count_notes(u, f);
        if (got != want)
            BOOST_ERROR("filter created [" << f.created.min_us << ", " << f.created.max_us
                        << "] updated [" << f.updated.min_us << ", " << f.updated.max_us
                        << "] flags " << f.flags_any << ": total " << got << ", brute force " << want);
    };
    for (int round = 0; round < 8; ++round) {
        std::vector<NoteInput> batch;
        for (int i = 0; i < 25; ++i) batch.push_back(fresh(test::plain_note("n" + std::to_string(i))));
        for (int i = 0; i < 5 && !live.empty(); ++i) batch.push_back(fresh(live[notes.any_live()]));
        store->write_batch(u, {}, batch);  // inserts and (re-imported) updates
        for (const NoteInput& n : batch) live[n.id] = n;
        for (int i = 0; i < 6; ++i) {
            const std::string id = notes.any_live();
            switch (rng() % 5) {
                case 0: {  // API update: new updated_us, flags
                    NoteInput n = live[id];
                    n.updated_us = std::max(n.created_us, pick(note_times));
                    n.flags = static_cast<int>(rng() % 16);
                    const auto rec = store->find_note(u, id);
                    BOOST_REQUIRE(store->update_note(u, n, rec->version).status == NoteWriteStatus::Done);
                    live[id] = n;
                    break;
                }
                case 1: {  // created_at moved earlier
                    if (live[id].created_us < kMinTime / 2) break;
                    const long long earlier = live[id].created_us - 1 - static_cast<long long>(rng() % (1LL << 40));
                    BOOST_REQUIRE(store->set_note_created(u, id, earlier).status == NoteWriteStatus::Done);
                    live[id].created_us = earlier;
                    break;
                }
                case 2:
                case 3:
                    notes.trash(*store, u, id);
                    break;
                default:
                    notes.erase(*store, u, id);
            }
            if (live.empty()) break;
        }
        notes.restore_some(*store, u, 3);
        const std::vector<std::string> problems = store->check_user(u);
        for (const std::string& p : problems) BOOST_ERROR("round " << round << ": " << p);
        for (int i = 0; i < 120; ++i) {
            NoteFilter f;
            bound(f.created);
            bound(f.updated);
            f.flags_any = static_cast<int>(rng() % 16);
            compare(f);
        }
    }
    // the named cases: on a boundary and either side, empty, the int64 ends, one microsecond
    const long long b = 6 * (1LL << 48);
    for (int shift : kTimeCountShifts)
        for (long long d : {-1, 0, 1}) {
            const long long t = b + (1LL << shift) + d;
            for (int mask : {0, kFlagImages | kFlagFiles}) {
                NoteFilter f;
                f.flags_any = mask;
                f.created = TimeRange{t, kMaxTime};
                compare(f);
                f.created = TimeRange{kMinTime, t};
                compare(f);
                f.updated = TimeRange{t, t};
                compare(f);
                f.created = TimeRange{t + 1, t};
                compare(f);
            }
        }
    for (int mask = 1; mask < 16; ++mask) {
        NoteFilter f;
        f.flags_any = mask;
        compare(f);
        f.updated = TimeRange{kMinTime, kMaxTime - 1};
        compare(f);
    }
    BOOST_CHECK_GT(live.size(), 100u);  // the rounds left enough notes to mean something
}

// A collection's filtered totals (a COUNT over its note_collections rows; with a flag filter
// over schema 015's note_collections_by_flags, one range per matching flags value) against a
// brute-force count, after links, unlinks, moves, flag-changing updates, trash, restore and
// deletes, for every flag mask with and without date bounds.
BOOST_FIXTURE_TEST_CASE(collection_totals_equal_brute_force, StoreFixture) {
    const long long u = user("coll-totals");
    const std::vector<std::string> colls = {new_uuid(), new_uuid(), new_uuid()};
    std::mt19937_64 rng(15);
    ExpectedNotes notes{rng, {}, {}};
    std::map<std::string, NoteInput>& live = notes.live;
    std::map<std::string, std::set<std::string>> links;  // note -> collections, live or trashed
    std::vector<NoteInput> batch;
    for (int i = 0; i < 160; ++i) {
        NoteInput n = test::plain_note("n" + std::to_string(i));
        n.created_us = static_cast<long long>(rng() % 1000) * 1000;
        n.updated_us = n.created_us + static_cast<long long>(rng() % 3) * 500;
        n.flags = static_cast<int>(rng() % 16);
        for (const std::string& c : colls)
            if (rng() % 2) n.collection_ids.push_back(c);
        batch.push_back(n);
    }
    store->write_batch(u, test::plain_collections(colls), batch);
    for (const NoteInput& n : batch) {
        live[n.id] = n;
        links[n.id] = {n.collection_ids.begin(), n.collection_ids.end()};
    }
    auto compare = [&](const NoteFilter& f, int round) {
        long long want = 0;
        for (const auto& [id, x] : live)
            if (links[id].count(*f.collection_id) && x.created_us >= f.created.min_us &&
                x.created_us <= f.created.max_us && x.updated_us >= f.updated.min_us &&
                x.updated_us <= f.updated.max_us && (f.flags_any == 0 || (x.flags & f.flags_any)))
                ++want;
        const long long got = store->count_notes(u, f);
        if (got != want)
            BOOST_ERROR("round " << round << " collection " << *f.collection_id << " created ["
                        << f.created.min_us << ", " << f.created.max_us << "] flags " << f.flags_any
                        << ": total " << got << ", brute force " << want);
    };
    for (int round = 0; round < 6; ++round) {
        for (int i = 0; i < 12 && !live.empty(); ++i) {
            const std::string id = notes.any_live();
            const std::string& c = colls[rng() % colls.size()];
            switch (rng() % 6) {
                case 0: {  // an API update that changes the flags (the links stay)
                    NoteInput n = live[id];
                    n.flags = static_cast<int>(rng() % 16);
                    n.updated_us += 1;
                    n.collection_ids.assign(links[id].begin(), links[id].end());
                    const auto rec = store->find_note(u, id);
                    BOOST_REQUIRE(store->update_note(u, n, rec->version).status == NoteWriteStatus::Done);
                    live[id] = n;
                    break;
                }
                case 1:
                    BOOST_REQUIRE(store->link_note(u, c, id) == CollectionWrite::Done);
                    links[id].insert(c);
                    break;
                case 2:
                    BOOST_REQUIRE(store->unlink_note(u, c, id) == CollectionWrite::Done);
                    links[id].erase(c);
                    break;
                case 3: {
                    if (links[id].empty() || links[id].count(c)) break;
                    const std::string from = *links[id].begin();
                    BOOST_REQUIRE(store->move_note(u, from, id, c) == CollectionWrite::Done);
                    links[id].erase(from);
                    links[id].insert(c);
                    break;
                }
                case 4:
                    notes.trash(*store, u, id);
                    break;
                default:
                    notes.erase(*store, u, id);
                    links.erase(id);
            }
        }
        notes.restore_some(*store, u, 2);
        for (const std::string& p : store->check_user(u)) BOOST_ERROR("round " << round << ": " << p);
        for (const std::string& c : colls)
            for (int mask = 0; mask < 16; ++mask) {
                NoteFilter f;
                f.collection_id = c;
                f.flags_any = mask;
                compare(f, round);
                f.created = TimeRange{250000, 750000};
                compare(f, round);
                f.created = TimeRange{};
                f.updated = TimeRange{kMinTime, 500000};
                compare(f, round);
            }
    }
    BOOST_CHECK_GT(live.size(), 80u);
}

// 011's fill (SQL, per backend) makes the rows the write path makes (C++): dropped and made again
// by migrate over the same notes, check_user finds them exact, negative times included.
BOOST_FIXTURE_TEST_CASE(migration_fills_the_counts_of_stored_notes, StoreFixture) {
    const long long u = user("fill");
    std::vector<NoteInput> notes;
    const std::vector<long long> times = edge_times();
    for (std::size_t i = 0; i < times.size(); i += 3) {
        if (times[i] <= kMinTime + 1 || times[i] >= kMaxTime - 1) continue;
        NoteInput n = test::plain_note("t" + std::to_string(i));
        n.created_us = times[i];
        n.updated_us = times[std::min(times.size() - 3, i + 2)];
        n.flags = static_cast<int>(i % 16);
        notes.push_back(n);
    }
    store->write_batch(u, {}, notes);
    NoteFilter images;
    images.flags_any = kFlagImages;
    images.created.min_us = 0;
    const long long before = store->count_notes(u, images);
    {
        auto db = raw();
        *db << "DROP TABLE note_time_counts";
        *db << "DELETE FROM schema_migrations WHERE version = 11";
    }
    store->migrate();
    const std::vector<std::string> problems = store->check_user(u);
    for (const std::string& p : problems) BOOST_ERROR(p);
    BOOST_CHECK_EQUAL(store->count_notes(u, images), before);
}

BOOST_AUTO_TEST_SUITE_END()
