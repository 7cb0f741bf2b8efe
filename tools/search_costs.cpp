// Where a search's time goes, per query kind, without HTTP: runs the queries of a request file
// written by tools/bench.py (or one query per line) through ranked_note_ids and a first result
// page (notes_by_ids + query_snippet) on one connection, one at a time, and prints per kind the
// mean microseconds and rows per query of each store call. The store calls are counted by a
// decorator around the real store, so the numbers are those of the code notesd runs.
//
//   search_costs DB USER FILE [--kinds rare,two_terms,...] [--rounds N] [--page N] [--top N]
//
// DB is a connection string (sqlite3://db=/path/notes.db). With --kinds, line i of FILE is of
// kind i mod (number of kinds), as in the mixed set of tools/bench.py. The first round warms
// the caches and is not reported (--rounds 2 by default). See doc/benchmarks.md.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <json/json.h>

#include "search/snippet.hpp"
#include "search/topk.hpp"
#include "store/store.hpp"

using namespace notesd;

namespace {

using Clock = std::chrono::steady_clock;

struct Cost {
    long long calls = 0, rows = 0;
    double us = 0;
};
using Costs = std::map<std::string, Cost>;

double us_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// Forwards every call of the search endpoint to the real store; the search path's calls also
// add to `costs`.
class CountingStore : public SearchStore {
public:
    explicit CountingStore(SearchStore& s) : s_(s) {}
    Costs costs;

private:
    template <typename F>
    auto timed(const char* name, F&& call) {
        const Clock::time_point t0 = Clock::now();
        auto out = call();
        Cost& c = costs[name];
        c.calls += 1;
        c.us += us_since(t0);
        if constexpr (std::is_same_v<decltype(out), SearchCorpus>)
            c.rows += 1;
        else
            c.rows += static_cast<long long>(out.size());
        return out;
    }

public:
    SearchCorpus search_corpus(long long u) override {
        return timed("search_corpus", [&] { return s_.search_corpus(u); });
    }
    std::vector<long long> term_dfs(long long u, const std::vector<std::string>& t) override {
        return timed("term_dfs", [&] { return s_.term_dfs(u, t); });
    }
    std::vector<std::pair<std::string, long long>> prefix_terms(long long u, const std::string& p,
                                                                int lim) override {
        return timed("prefix_terms", [&] { return s_.prefix_terms(u, p, lim); });
    }
    using SearchIndex::term_postings;
    std::vector<TermPosting> term_postings(long long u, const std::string& t, const SearchFilter& f,
                                           int lim, bool with_positions) override {
        // the time-bounded reads of fill_open_counts are the windows
        const bool window = !(f.updated == TimeRange{});
        return timed(window ? "term_postings (window)" : "term_postings",
                     [&] { return s_.term_postings(u, t, f, lim, with_positions); });
    }
    std::vector<TermPosting> postings_at(long long u, const std::string& t,
                                         const std::vector<PostingNote>& n) override {
        return timed("postings_at", [&] { return s_.postings_at(u, t, n); });
    }
    std::vector<IndexedNote> indexed_notes(long long u, const std::vector<std::string>& ids) override {
        return timed("indexed_notes", [&] { return s_.indexed_notes(u, ids); });
    }
    std::vector<SearchHit> notes_by_ids(long long u, const std::vector<std::string>& ids,
                                        bool content) override {
        return timed("notes_by_ids", [&] { return s_.notes_by_ids(u, ids, content); });
    }

    void save_snapshot(const SnapshotRecord& r) override { s_.save_snapshot(r); }
    std::optional<SnapshotRecord> find_snapshot(long long u, const std::string& id, long long now) override {
        return s_.find_snapshot(u, id, now);
    }
    int purge_snapshots(long long now, int max_rows) override { return s_.purge_snapshots(now, max_rows); }
    void begin_read() override { s_.begin_read(); }
    void end_read() noexcept override { s_.end_read(); }

private:
    SearchStore& s_;
};

// A line of a tools/bench.py request file (METHOD TAB TOKEN TAB PATH TAB JSON) or a bare query.
std::string query_of(const std::string& line) {
    const std::size_t tab = line.rfind('\t');
    if (tab == std::string::npos) return line;
    Json::Value v;
    Json::CharReaderBuilder b;
    std::string errors;
    const std::string json = line.substr(tab + 1);
    std::unique_ptr<Json::CharReader> r(b.newCharReader());
    if (!r->parse(json.data(), json.data() + json.size(), &v, &errors) || !v.isObject())
        return line;
    return v.get("query", "").asString();
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::size_t from = 0;
    for (std::size_t at; (at = s.find(sep, from)) != std::string::npos; from = at + 1)
        out.push_back(s.substr(from, at - from));
    out.push_back(s.substr(from));
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::cerr << "usage: search_costs DB USER FILE [--kinds a,b,...] [--rounds N] [--page N] [--top N]\n";
        return 2;
    }
    std::vector<std::string> kinds = {"all"};
    int rounds = 2;
    std::size_t top = 0;  // --top: the costliest query lines, by ranking time
    std::size_t page = 20;
    for (int i = 4; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--kinds") kinds = split(argv[i + 1], ',');
        else if (a == "--rounds") rounds = std::max(2, std::atoi(argv[i + 1]));
        else if (a == "--top") top = static_cast<std::size_t>(std::max(0, std::atoi(argv[i + 1])));
        else if (a == "--page") page = static_cast<std::size_t>(std::max(1, std::atoi(argv[i + 1])));
        else {
            std::cerr << "unknown option " << a << "\n";
            return 2;
        }
    }
    std::unique_ptr<Store> real = open_store(argv[1]);
    CountingStore store(*real);
    const std::optional<UserInfo> user = real->find_user(argv[2]);
    if (!user) {
        std::cerr << "no user " << argv[2] << "\n";
        return 2;
    }
    std::vector<std::string> queries;
    std::ifstream in(argv[3]);
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) queries.push_back(query_of(line));
    if (queries.empty()) {
        std::cerr << "no queries in " << argv[3] << "\n";
        return 2;
    }
    std::map<std::string, Costs> by_kind;
    std::map<std::string, long long> counted;
    std::vector<double> rank_by_line(queries.size(), 0);
    for (int round = 0; round < rounds; ++round)
        for (std::size_t i = 0; i < queries.size(); ++i) {
            store.costs.clear();
            const Clock::time_point t0 = Clock::now();
            const ParsedQuery q = parse_query(queries[i]);
            std::vector<std::string> ids;
            {
                ReadScope view(store);
                ids = ranked_note_ids(store, user->id, q, SearchFilter{});
            }
            const double rank_us = us_since(t0);
            const Clock::time_point t1 = Clock::now();
            ids.resize(std::min(ids.size(), page));
            std::vector<SearchHit> hits;
            {
                ReadScope view(store);
                hits = store.notes_by_ids(user->id, ids, false);
            }
            const Clock::time_point t2 = Clock::now();
            long long snippets = 0;
            SnippetMaker maker(q);
            for (const SearchHit& h : hits) snippets += !maker.snippet(h.plain_text).empty();
            const double snippet_us = us_since(t2);
            if (round == 0) continue;  // warming
            rank_by_line[i] += rank_us;
            Costs& k = by_kind[kinds[i % kinds.size()]];
            counted[kinds[i % kinds.size()]] += 1;
            for (const auto& [name, c] : store.costs) {
                Cost& a = k[name];
                a.calls += c.calls;
                a.rows += c.rows;
                a.us += c.us;
            }
            k["= ranked_note_ids (total)"].us += rank_us;
            k["= result page (notes_by_ids + snippets)"].us += us_since(t1);
            Cost& sn = k["query_snippet (rows: snippets made)"];
            sn.calls += static_cast<long long>(hits.size());
            sn.us += snippet_us;
            sn.rows += snippets;
        }
    std::printf("%-42s %8s %10s %10s\n", "kind / step", "calls/q", "rows/q", "us/q");
    for (const auto& [kind, costs] : by_kind) {
        const double n = static_cast<double>(counted[kind]);
        std::printf("%s (%lld queries x %d rounds)\n", kind.c_str(), counted[kind] / (rounds - 1), rounds - 1);
        for (const auto& [name, c] : costs) {
            if (name[0] == '=')  // a step of the search, not a store call
                std::printf("  %-40s %8s %10s %10.1f\n", name.c_str(), "", "", c.us / n);
            else
                std::printf("  %-40s %8.2f %10.1f %10.1f\n", name.c_str(), c.calls / n, c.rows / n, c.us / n);
        }
    }
    if (top > 0) {
        std::vector<std::size_t> lines(queries.size());
        for (std::size_t i = 0; i < lines.size(); ++i) lines[i] = i;
        std::sort(lines.begin(), lines.end(),
                  [&](std::size_t a, std::size_t b) { return rank_by_line[a] > rank_by_line[b]; });
        double all = 0;
        for (double v : rank_by_line) all += v;
        std::printf("costliest lines by ranking time (us per run, share of all ranking time)\n");
        for (std::size_t k = 0; k < std::min(top, lines.size()); ++k)
            std::printf("  %6zu %10.1f %5.1f%%  %s\n", lines[k] + 1, rank_by_line[lines[k]] / (rounds - 1),
                        100.0 * rank_by_line[lines[k]] / all, queries[lines[k]].c_str());
    }
    return 0;
}
