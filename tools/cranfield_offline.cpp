// Offline relevance check of the search core: indexes Cranfield 1400 in memory with the same
// text analysis the store uses, runs all 225 queries through parse_query + Ranker (including the
// candidate bound), and prints MAP over a 100-result window, P@10 and nDCG@10 (binary relevance).
//
//   cranfield_offline [--dir /work/shared/eval/cranfield] [--budget N] [--candidates N]
//                     [--no-stem] [--k1 X] [--title-weight X] [--title-b X] [--body-b X]
//                     [--stop-weight X] [--prefix-weight X] [--phrase-weight X]
//                     [--proximity-weight X] [--proximity-window N] [--per-query]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "search/ranker.hpp"
#include "index/text.hpp"

using namespace notesd;

namespace {

constexpr std::size_t kWindow = 100;

struct Doc {
    std::string id;
    long long updated_us = 0;
    std::string title, body;
    FieldIndex title_ix, body_ix;
};

struct Options {
    std::string dir = "/work/shared/eval/cranfield";
    long long budget = 10000;
    std::size_t candidates = 1000;
    bool stem = true;
    bool per_query = false;
    RankParams params;
};

std::vector<std::string> read_lines(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::cerr << "cannot read " << path << "\n";
        std::exit(2);
    }
    std::vector<std::string> out;
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        out.push_back(line);
    }
    return out;
}

// SMART format: ".I n" starts a record, ".X" starts field X; returns records of field -> text.
std::vector<std::map<char, std::string>> read_smart(const std::string& path) {
    std::vector<std::map<char, std::string>> recs;
    char field = 0;
    for (const auto& line : read_lines(path)) {
        if (line.size() >= 2 && line[0] == '.' && (line.size() == 2 || line[2] == ' ')) {
            field = line[1];
            if (field == 'I') recs.emplace_back();
            continue;
        }
        if (recs.empty() || field == 0) continue;
        std::string& s = recs.back()[field];
        if (!s.empty()) s.push_back('\n');
        s += line;
    }
    return recs;
}

double parse_double(const char* s) { return std::strtod(s, nullptr); }

Options parse_args(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> const char* {
            if (i + 1 >= argc) {
                std::cerr << a << " needs a value\n";
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--dir") o.dir = next();
        else if (a == "--budget") o.budget = std::atoll(next());
        else if (a == "--candidates") o.candidates = static_cast<std::size_t>(std::atoll(next()));
        else if (a == "--no-stem") o.stem = false;
        else if (a == "--per-query") o.per_query = true;
        else if (a == "--k1") o.params.k1 = parse_double(next());
        else if (a == "--title-weight") o.params.title_weight = parse_double(next());
        else if (a == "--title-b") o.params.title_b = parse_double(next());
        else if (a == "--body-b") o.params.body_b = parse_double(next());
        else if (a == "--stop-weight") o.params.stop_weight = parse_double(next());
        else if (a == "--prefix-weight") o.params.prefix_weight = parse_double(next());
        else if (a == "--phrase-weight") o.params.phrase_weight = parse_double(next());
        else if (a == "--proximity-weight") o.params.proximity_weight = parse_double(next());
        else if (a == "--proximity-window") o.params.proximity_window = std::atoi(next());
        else {
            std::cerr << "unknown option " << a << "\n";
            std::exit(2);
        }
    }
    return o;
}

// The in-memory stand-in for the store: per-user statistics, a term dictionary and postings.
struct Index {
    std::vector<Doc> docs;
    CorpusStats corpus;
    std::unordered_map<std::string, std::vector<Posting>> postings;  // newest first
    std::vector<std::string> dictionary;                                  // sorted

    long long df(const std::string& t) const {
        auto it = postings.find(t);
        return it == postings.end() ? 0 : static_cast<long long>(it->second.size());
    }
};

Index build_index(const std::string& dir, const AnalyzeOptions& aopts, double* ms_per_doc) {
    Index ix;
    const auto recs = read_smart(dir + "/cran.all.1400");
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < recs.size(); ++i) {
        Doc d;
        char id[24];
        std::snprintf(id, sizeof id, "%04zu", i + 1);
        d.id = id;
        d.updated_us = static_cast<long long>(i + 1);
        auto f = recs[i].find('T');
        d.title = f == recs[i].end() ? "" : f->second;
        f = recs[i].find('W');
        d.body = f == recs[i].end() ? "" : f->second;
        d.title_ix = index_field(d.title, aopts);
        d.body_ix = index_field(d.body, aopts);
        ix.docs.push_back(std::move(d));
    }
    const auto t1 = std::chrono::steady_clock::now();
    *ms_per_doc = std::chrono::duration<double, std::milli>(t1 - t0).count() / static_cast<double>(recs.size());
    for (std::size_t i = ix.docs.size(); i-- > 0;) {  // newest (highest updated) first
        // Like the store: one posting per distinct term with its title and body counts, the
        // field lengths, and the id as uuid halves (doc i's id is i + 1 in the low half).
        const Doc& d = ix.docs[i];
        std::map<std::string_view, std::pair<int, int>> counts;
        for (auto t : split_terms(d.title_ix.terms)) ++counts[t].first;
        for (auto t : split_terms(d.body_ix.terms)) ++counts[t].second;
        for (const auto& [t, c] : counts) {
            Posting p;
            p.uid_hi = 0;
            p.uid_lo = static_cast<long long>(i + 1);
            p.updated_us = d.updated_us;
            p.title_tf = c.first;
            p.body_tf = c.second;
            p.title_len = static_cast<int>(d.title_ix.length);
            p.body_len = static_cast<int>(d.body_ix.length);
            ix.postings[std::string(t)].push_back(p);
        }
        ix.corpus.title_tokens += d.title_ix.length;
        ix.corpus.body_tokens += d.body_ix.length;
    }
    ix.corpus.notes = static_cast<long long>(ix.docs.size());
    for (const auto& [t, p] : ix.postings) ix.dictionary.push_back(t);
    std::sort(ix.dictionary.begin(), ix.dictionary.end());
    return ix;
}

QueryStats resolve(const Index& ix, const ParsedQuery& q) {
    QueryStats s;
    s.corpus = ix.corpus;
    for (const auto& t : q.lookup_terms()) s.df[t] = ix.df(t);
    const std::string p = q.prefix();
    if (!p.empty()) {
        std::vector<std::pair<long long, std::string>> exp;
        for (auto it = std::lower_bound(ix.dictionary.begin(), ix.dictionary.end(), p);
             it != ix.dictionary.end() && it->compare(0, p.size(), p) == 0; ++it)
            exp.emplace_back(-ix.df(*it), *it);
        std::sort(exp.begin(), exp.end());
        for (std::size_t i = 0; i < exp.size() && i < kMaxPrefixExpansions; ++i) {
            s.expansions.push_back(exp[i].second);
            s.df[exp[i].second] = -exp[i].first;
        }
    }
    return s;
}

std::vector<std::string> search(const Index& ix, const std::string& text, const Options& o) {
    AnalyzeOptions aopts;
    aopts.stem = o.stem;
    ParsedQuery q = parse_query(text, aopts);
    Ranker r(q, resolve(ix, q), o.params);
    const auto units = r.retrieval_plan(o.budget);
    std::vector<std::vector<Posting>> postings;
    std::vector<bool> complete;
    for (const auto& u : units) {
        postings.emplace_back();
        const auto& list = ix.postings.at(u.term);
        for (std::size_t i = 0; i < list.size() && static_cast<long long>(i) < o.budget; ++i)
            postings.back().push_back(list[i]);
        complete.push_back(static_cast<long long>(list.size()) <= o.budget);
    }
    // Every candidate scored from its stored terms (the reference the store's shortcuts must
    // reproduce bit for bit).
    std::vector<RankedNote> ranked;
    for (const auto& c : r.bound_candidates(units, postings, complete, o.candidates)) {
        const Doc& d = ix.docs[static_cast<std::size_t>(c.uid_lo) - 1];
        if (auto s = r.score(d.title_ix.terms, d.body_ix.terms)) ranked.push_back(RankedNote{d.id, d.updated_us, *s});
    }
    std::sort(ranked.begin(), ranked.end(), ranks_before);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < ranked.size() && i < kWindow; ++i) out.push_back(ranked[i].id);
    return out;
}

struct Metrics {
    double ap = 0, p10 = 0, ndcg10 = 0;
};

Metrics evaluate(const std::vector<std::string>& result, const std::set<std::string>& rel) {
    Metrics m;
    double hits = 0, dcg = 0, idcg = 0;
    for (std::size_t i = 0; i < result.size(); ++i) {
        if (!rel.count(result[i])) continue;
        hits += 1;
        m.ap += hits / static_cast<double>(i + 1);
        if (i < 10) dcg += 1.0 / std::log2(static_cast<double>(i) + 2.0);
    }
    for (std::size_t i = 0; i < rel.size() && i < 10; ++i) idcg += 1.0 / std::log2(static_cast<double>(i) + 2.0);
    m.ap = rel.empty() ? 0 : m.ap / static_cast<double>(rel.size());
    m.ndcg10 = idcg > 0 ? dcg / idcg : 0;
    for (std::size_t i = 0; i < result.size() && i < 10; ++i) m.p10 += rel.count(result[i]) ? 0.1 : 0;
    return m;
}

// qrels number queries 1..225 by position in cran.qry, not by its .I values (which have gaps).
std::map<int, std::set<std::string>> read_qrels(const std::string& path) {
    std::map<int, std::set<std::string>> out;
    for (const auto& line : read_lines(path)) {
        std::istringstream in(line);
        int q = 0, doc = 0, grade = 0;
        if (!(in >> q >> doc >> grade)) continue;
        if (grade < 1 || grade > 4) continue;
        char id[16];
        std::snprintf(id, sizeof id, "%04d", doc);
        out[q].insert(id);
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse_args(argc, argv);
    AnalyzeOptions aopts;
    aopts.stem = o.stem;
    double ms_per_doc = 0;
    const Index ix = build_index(o.dir, aopts, &ms_per_doc);
    const auto queries = read_smart(o.dir + "/cran.qry");
    const auto qrels = read_qrels(o.dir + "/cranqrel");
    Metrics sum;
    std::size_t judged = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t k = 0; k < queries.size(); ++k) {
        auto w = queries[k].find('W');
        const std::string text = w == queries[k].end() ? "" : w->second;
        const auto result = search(ix, text, o);
        auto rel = qrels.find(static_cast<int>(k + 1));
        const Metrics m = evaluate(result, rel == qrels.end() ? std::set<std::string>() : rel->second);
        if (o.per_query) std::printf("q%zu ap=%.4f p10=%.2f ndcg10=%.4f\n", k + 1, m.ap, m.p10, m.ndcg10);
        sum.ap += m.ap;
        sum.p10 += m.p10;
        sum.ndcg10 += m.ndcg10;
        ++judged;
    }
    const double qms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const double n = static_cast<double>(judged);
    std::printf("docs %zu queries %zu (qrels for %zu)\n", ix.docs.size(), queries.size(), qrels.size());
    std::printf("MAP@100 %.4f  P@10 %.4f  nDCG@10 %.4f\n", sum.ap / n, sum.p10 / n, sum.ndcg10 / n);
    std::printf("analysis %.3f ms/note, query %.3f ms/query (budget %lld, candidates %zu)\n", ms_per_doc,
                qms / n, o.budget, o.candidates);
    return 0;
}
