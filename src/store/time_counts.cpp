#include "store/time_counts.hpp"

#include <algorithm>
#include <stdexcept>

#include "store/soci_stmt.hpp"

namespace notesd::detail {
namespace {

const char* column_name(TimeColumn c) { return c == TimeColumn::Created ? "created_us" : "updated_us"; }
const char* index_name(TimeColumn c) {
    return c == TimeColumn::Created ? "notes_by_created" : "notes_by_updated";
}

constexpr const char* kRowKey = "user_id = :u AND time_column = :c AND shift = :s AND "
                                "bucket = :b AND flags = :f";

// `(:m = 0 OR (flags & :mm) <> 0)` with the placeholders numbered by `n`.
std::string flags_match(const std::string& n) {
    return "(:m" + n + " = 0 OR (flags & :mm" + n + ") <> 0)";
}

}  // namespace

void TimeCounts::add_rows(std::map<RowKey, long long>& rows, const NoteTimes& n, long long sign) {
    for (TimeColumn c : {TimeColumn::Created, TimeColumn::Updated}) {
        const long long t = c == TimeColumn::Created ? n.created_us : n.updated_us;
        for (int shift : kTimeCountShifts)
            rows[RowKey{static_cast<long long>(c), shift, time_bucket(t, shift), n.flags}] += sign;
    }
}

void TimeCounts::note_changed(const NoteTimes* before, const NoteTimes* after) {
    if (before) add_rows(pending_, *before, -1);
    if (after) add_rows(pending_, *after, +1);
}

// Increases are upserted kUpsertRows per statement (a round trip each on a server backend);
// decreases delete the row they empty, or else update it.
void TimeCounts::write(long long user_id) {
    if (pending_.empty()) return;
    prepare_writes();
    user_id_ = user_id;
    std::vector<std::pair<RowKey, long long>> increases;
    for (const auto& [key, delta] : pending_) {
        if (delta > 0) increases.emplace_back(key, delta);
        if (delta < 0) write_decrease(key, delta);
    }
    pending_.clear();
    write_increases(increases);
}

void TimeCounts::write_increases(std::vector<std::pair<RowKey, long long>>& rows) {
    std::size_t i = 0;
    for (; i + kUpsertRows <= rows.size(); i += kUpsertRows) {
        for (std::size_t k = 0; k < kUpsertRows; ++k) {
            keys_[k] = rows[i + k].first;
            deltas_[k] = rows[i + k].second;
        }
        exec(*upsert_many_);
    }
    for (; i < rows.size(); ++i) {
        keys_[0] = rows[i].first;
        deltas_[0] = rows[i].second;
        exec(*upsert_one_);
    }
}

void TimeCounts::write_decrease(const RowKey& key, long long delta) {
    key_ = key;
    delta_ = delta;
    exec(*delete_if_);
    if (delete_if_->get_affected_rows() > 0) return;
    exec(*add_);
    if (add_->get_affected_rows() == 0)
        throw std::runtime_error("note time counts out of step with the notes");
}

void TimeCounts::prepare_writes() {
    if (upsert_one_) return;
    auto upsert = [&](std::size_t rows) {
        std::string sql = "INSERT INTO note_time_counts (user_id, time_column, shift, bucket, "
                          "flags, notes) VALUES ";
        for (std::size_t i = 0; i < rows; ++i) {
            const std::string n = std::to_string(i);
            sql += std::string(i ? ", " : "") + "(:u, :c" + n + ", :s" + n + ", :b" + n + ", :f" +
                   n + ", :n" + n + ")";
        }
        Prep p(sql_, sql + d_.upsert_add("note_time_counts",
                                         "user_id, time_column, shift, bucket, flags", "notes"));
        p.in(user_id_, "u");
        for (std::size_t i = 0; i < rows; ++i) {
            const std::string n = std::to_string(i);
            p.in(keys_[i][0], ("c" + n).c_str()).in(keys_[i][1], ("s" + n).c_str())
                .in(keys_[i][2], ("b" + n).c_str()).in(keys_[i][3], ("f" + n).c_str())
                .in(deltas_[i], ("n" + n).c_str());
        }
        return p.done();
    };
    auto keyed = [&](const std::string& sql) {
        Prep p(sql_, sql);
        p.in(user_id_, "u").in(key_[0], "c").in(key_[1], "s").in(key_[2], "b").in(key_[3], "f")
            .in(delta_, "d").in(delta_, "d2");
        return p.done();
    };
    upsert_one_.emplace(upsert(1));
    upsert_many_.emplace(upsert(kUpsertRows));
    // a row that held exactly what leaves it goes; a smaller one is left for the error
    delete_if_.emplace(keyed(std::string("DELETE FROM note_time_counts WHERE ") + kRowKey +
                             " AND notes + :d = 0"));
    add_.emplace(keyed(std::string("UPDATE note_time_counts SET notes = notes + :d WHERE ") +
                       kRowKey + " AND notes + :d2 > 0"));
}

// One statement: a sum over the cover's bucket spans and a COUNT over each edge, each a range
// of a primary key or index, so a server answers it in one round trip.
soci::statement& TimeCounts::cover_statement(TimeColumn c) {
    std::optional<soci::statement>& slot = cover_[static_cast<int>(c)];
    if (slot) return *slot;
    std::string sum;
    for (int i = 0; i < TimeCover::kSpans; ++i) {
        const std::string n = std::to_string(i);
        sum += "(SELECT COALESCE(SUM(notes), 0) FROM note_time_counts WHERE user_id = :u" + n +
               " AND time_column = " + std::to_string(static_cast<int>(c)) + " AND shift = " +
               std::to_string(kTimeCountShifts[TimeCover::level_of(i)]) + " AND bucket >= :lo" +
               n + " AND bucket <= :hi" + n + " AND " + flags_match(n) + ") + ";
    }
    const std::string col = column_name(c);
    for (int e = 0; e < 2; ++e) {
        const std::string n = "e" + std::to_string(e);
        sum += "(SELECT " + d_.count_star() + " FROM notes" + d_.force_index(index_name(c)) +
               " WHERE user_id = :u" + n + " AND " + col + " >= :lo" + n + " AND " + col +
               " <= :hi" + n + " AND " + flags_match(n) + ")" + (e == 0 ? " + " : "");
    }
    Prep p(sql_, "SELECT " + d_.as_bigint(sum));
    p.out(b_.result);
    for (int i = 0; i < TimeCover::kSpans + 2; ++i) {
        const bool edge = i >= TimeCover::kSpans;
        const std::string n = edge ? "e" + std::to_string(i - TimeCover::kSpans) : std::to_string(i);
        long long& lo = edge ? b_.edge_min[i - TimeCover::kSpans] : b_.first[i];
        long long& hi = edge ? b_.edge_max[i - TimeCover::kSpans] : b_.last[i];
        p.in(b_.user_id, ("u" + n).c_str()).in(lo, ("lo" + n).c_str()).in(hi, ("hi" + n).c_str())
            .in(b_.mask, ("m" + n).c_str()).in(b_.mask, ("mm" + n).c_str());
    }
    return slot.emplace(p.done());
}

// Both time columns bounded: the index of `by` gives the range, the other column is filtered
// (`+ 0` keeps a planner from reading its index instead).
soci::statement& TimeCounts::scan_statement(TimeColumn by) {
    std::optional<soci::statement>& slot = scan_[static_cast<int>(by)];
    if (slot) return *slot;
    const bool created = by == TimeColumn::Created;
    const std::string c = created ? "created_us" : "created_us + 0";
    const std::string u = created ? "updated_us + 0" : "updated_us";
    Prep p(sql_, "SELECT " + d_.count_star() + " FROM notes" + d_.force_index(index_name(by)) +
                     " WHERE user_id = :u AND " + c + " >= :cmin AND " + c + " <= :cmax AND " +
                     u + " >= :umin AND " + u + " <= :umax AND " + flags_match(""));
    p.out(b_.result).in(b_.user_id, "u").in(b_.created_min, "cmin").in(b_.created_max, "cmax")
        .in(b_.updated_min, "umin").in(b_.updated_max, "umax").in(b_.mask, "m").in(b_.mask, "mm");
    return slot.emplace(p.done());
}

long long TimeCounts::covered(long long user_id, TimeColumn c, const TimeRange& range,
                              long long mask) {
    const TimeCover cover = cover_time_range(range.min_us, range.max_us);
    soci::statement& st = cover_statement(c);
    b_.user_id = user_id;
    b_.mask = mask;
    for (int i = 0; i < TimeCover::kSpans; ++i) {
        b_.first[i] = cover.spans[i].first;
        b_.last[i] = cover.spans[i].last;
    }
    for (int e = 0; e < 2; ++e) {
        b_.edge_min[e] = cover.edges[e].min_us;
        b_.edge_max[e] = cover.edges[e].max_us;
    }
    return fetch_one(st) ? b_.result : 0;
}

long long TimeCounts::scan(long long user_id, TimeColumn by, const NoteFilter& f) {
    soci::statement& st = scan_statement(by);
    b_.user_id = user_id;
    b_.mask = f.flags_any;
    b_.created_min = f.created.min_us;
    b_.created_max = f.created.max_us;
    b_.updated_min = f.updated.min_us;
    b_.updated_max = f.updated.max_us;
    return fetch_one(st) ? b_.result : 0;
}

// One bounded time column: its cover. Both: each column's count in its range and the count of
// all notes (with the flags) price four exact ways, and the cheapest runs: counting one range's
// notes in the other, or taking from one range's count its notes outside the other range (the
// two index ranges beside that range). Bounds that leave nothing out cost nothing.
long long TimeCounts::count(long long user_id, const NoteFilter& f) {
    if (f.created.min_us > f.created.max_us || f.updated.min_us > f.updated.max_us) return 0;
    const long long mask = f.flags_any;
    const bool by_created = !(f.created == TimeRange{}), by_updated = !(f.updated == TimeRange{});
    if (!by_updated) return covered(user_id, TimeColumn::Created, f.created, mask);
    if (!by_created) return covered(user_id, TimeColumn::Updated, f.updated, mask);
    const long long in_created = covered(user_id, TimeColumn::Created, f.created, mask);
    if (in_created == 0) return 0;
    const long long in_updated = covered(user_id, TimeColumn::Updated, f.updated, mask);
    if (in_updated == 0) return 0;
    const long long all = covered(user_id, TimeColumn::Created, TimeRange{}, mask);
    const long long cheapest = std::min({in_created, in_updated, all - in_created, all - in_updated});
    if (cheapest == in_created) return scan(user_id, TimeColumn::Created, f);
    if (cheapest == in_updated) return scan(user_id, TimeColumn::Updated, f);
    const TimeColumn outside = cheapest == all - in_created ? TimeColumn::Created : TimeColumn::Updated;
    const TimeRange& r = outside == TimeColumn::Created ? f.created : f.updated;
    long long n = outside == TimeColumn::Created ? in_updated : in_created;
    auto minus_notes_in = [&](const TimeRange& beside) {
        NoteFilter g = f;
        (outside == TimeColumn::Created ? g.created : g.updated) = beside;
        n -= scan(user_id, outside, g);
    };
    if (r.min_us != kMinTime) minus_notes_in(TimeRange{kMinTime, r.min_us - 1});
    if (r.max_us != kMaxTime) minus_notes_in(TimeRange{r.max_us + 1, kMaxTime});
    return n;
}

std::vector<std::string> TimeCounts::check(long long user_id) {
    std::map<RowKey, long long> recount;
    NoteTimes n;
    long long u = user_id;
    soci::statement notes = Prep(sql_, "SELECT created_us, updated_us, flags FROM notes WHERE "
                                       "user_id = :u")
                                .out(n.created_us).out(n.updated_us).out(n.flags).in(u, "u").done();
    notes.execute();
    while (notes.fetch()) add_rows(recount, n, +1);
    std::map<RowKey, long long> stored;
    RowKey k{};
    long long count = 0;
    soci::statement rows = Prep(sql_, "SELECT time_column, shift, bucket, flags, notes FROM "
                                      "note_time_counts WHERE user_id = :u")
                               .out(k[0]).out(k[1]).out(k[2]).out(k[3]).out(count).in(u, "u").done();
    rows.execute();
    while (rows.fetch()) stored[k] = count;
    std::vector<std::string> out;
    auto differs = [&](const RowKey& key, long long have, long long want) {
        out.push_back("note_time_counts of " + std::string(key[0] == 0 ? "created_us" : "updated_us") +
                      " bucket " + std::to_string(key[2]) + " of 2^" + std::to_string(key[1]) +
                      " us, flags " + std::to_string(key[3]) + ": maintained " +
                      std::to_string(have) + ", recount " + std::to_string(want));
    };
    for (const auto& [key, want] : recount) {
        auto it = stored.find(key);
        const long long have = it == stored.end() ? 0 : it->second;
        if (have != want) differs(key, have, want);
    }
    for (const auto& [key, have] : stored)
        if (!recount.count(key)) differs(key, have, 0);
    return out;
}

}  // namespace notesd::detail
