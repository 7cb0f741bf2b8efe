#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "index/positions.hpp"
#include "search/ranker.hpp"

using namespace notesd;

namespace {

// A one-user corpus kept the way the store keeps it: stored term strings and integer statistics.
struct Corpus {
    struct Note {
        std::string id;
        long long updated_us;
        FieldIndex title, body;
    };
    std::vector<Note> notes;

    void add(const std::string& id, std::string_view title, std::string_view body, long long updated = 0) {
        notes.push_back(Note{id, updated, index_field(title), index_field(body)});
    }

    long long df(const std::string& term) const {
        long long n = 0;
        for (const auto& note : notes) {
            auto a = split_terms(note.title.terms), b = split_terms(note.body.terms);
            n += std::count(a.begin(), a.end(), term) + std::count(b.begin(), b.end(), term) > 0;
        }
        return n;
    }

    QueryStats stats(const ParsedQuery& q) const {
        QueryStats s;
        s.corpus.notes = static_cast<long long>(notes.size());
        for (const auto& n : notes) {
            s.corpus.title_tokens += n.title.length;
            s.corpus.body_tokens += n.body.length;
        }
        for (const auto& t : q.lookup_terms()) s.df[t] = df(t);
        std::set<std::string> dict;
        for (const auto& n : notes)
            for (auto f : {&n.title, &n.body})
                for (auto t : split_terms(f->terms)) dict.insert(std::string(t));
        const std::string p = q.prefix();
        for (const auto& t : dict)
            if (!p.empty() && t.compare(0, p.size(), p) == 0 && s.expansions.size() < kMaxPrefixExpansions) {
                s.expansions.push_back(t);
                s.df[t] = df(t);
            }
        return s;
    }

    // Every note is a candidate here; the ranker decides what matches and in which order.
    std::vector<RankedNote> search(std::string_view query) const {
        ParsedQuery q = parse_query(query);
        Ranker r(q, stats(q));
        std::vector<RankedNote> out;
        for (const auto& n : notes)
            if (auto s = r.score(n.title.terms, n.body.terms)) out.push_back(RankedNote{n.id, n.updated_us, *s});
        std::sort(out.begin(), out.end(), ranks_before);
        return out;
    }

    std::vector<std::string> ids(std::string_view query) const {
        std::vector<std::string> out;
        for (const auto& r : search(query)) out.push_back(r.id);
        return out;
    }
};

using V = std::vector<std::string>;

Corpus filler(Corpus c) {
    c.add("f1", "groceries", "milk bread eggs and butter");
    c.add("f2", "meeting notes", "discussed the roadmap and hiring");
    c.add("f3", "travel", "book flights and a hotel for the trip");
    return c;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(ranker)

BOOST_AUTO_TEST_CASE(hostile_queries_are_plain_text) {
    const std::string emoji = [] {
        std::string s;
        for (int i = 0; i < 1000; ++i) s += "😀";
        return s;
    }();
    for (const std::string q : {"\"", "*", "-", "AND", "NEAR(", ":", ")(", "a OR b NOT c", "\"\"\"", "\xff"})
        BOOST_CHECK_NO_THROW(parse_query(q));
    BOOST_CHECK(parse_query(emoji).empty());
    BOOST_CHECK(parse_query("\"").empty());
    BOOST_CHECK(parse_query(")(").empty());
    const ParsedQuery near = parse_query("NEAR(");
    BOOST_REQUIRE(!near.empty());
    BOOST_CHECK(near.clauses[0].terms == V{"near"});
    Corpus c = filler(Corpus());
    c.add("n1", "and or not", "near the end");
    BOOST_CHECK(c.ids(emoji).empty());
    BOOST_CHECK(c.ids("AND").size() >= 1u);  // a stopword-only query still matches
    BOOST_CHECK(c.ids("NEAR(") == V{"n1"});
}

BOOST_AUTO_TEST_CASE(cjk_queries) {
    BOOST_CHECK(parse_query("東京").clauses[0].kind == ClauseKind::Term);
    BOOST_CHECK(parse_query("東京都").clauses[0].kind == ClauseKind::Phrase);
    BOOST_CHECK(parse_query("東").clauses[0].kind == ClauseKind::Prefix);
    Corpus c = filler(Corpus());
    c.add("jp", "出張", "東京都庁に行きました");
    c.add("kr", "약속", "서울에서 만나요");
    c.add("other", "京都", "京都の寺");
    BOOST_CHECK(c.ids("東京") == V{"jp"});
    BOOST_CHECK(c.ids("都庁") == V{"jp"});
    BOOST_CHECK(c.ids("行きました") == V{"jp"});
    BOOST_CHECK(c.ids("서울") == V{"kr"});
    BOOST_CHECK(c.ids("東京都") == V{"jp"});  // 京都 alone is not the phrase 東京都
}

BOOST_AUTO_TEST_CASE(folding_matches) {
    Corpus c = filler(Corpus());
    c.add("cafe", "cafe list", "the best cafe in town");
    c.add("abc", "letters", "abc");
    BOOST_CHECK(c.ids("Café") == V{"cafe"});
    BOOST_CHECK(c.ids("ＡＢＣ") == V{"abc"});
}

BOOST_AUTO_TEST_CASE(prefix_only_for_the_last_word) {
    Corpus c = filler(Corpus());
    c.add("k8s", "cluster", "we run kubernetes in production");
    BOOST_CHECK(c.ids("kuber") == V{"k8s"});
    BOOST_CHECK(c.ids("kuber xyzzy").empty());  // not last: an exact term only
    BOOST_CHECK(c.ids("kubernetes") == V{"k8s"});
}

BOOST_AUTO_TEST_CASE(phrases_need_adjacent_words) {
    // ids chosen so that a score tie would put the wrong note first (id descending)
    Corpus c = filler(Corpus());
    c.add("b_apart", "disk", "the system stores each file on disk");
    c.add("a_phrase", "disk", "the file system stores data on disk");
    BOOST_CHECK(c.ids("\"file system\"") == V{"a_phrase"});
    BOOST_CHECK(c.ids("\"file system stores\"") == V{"a_phrase"});
    BOOST_CHECK(c.ids("\"file system data\"").empty());
    // unquoted, both match, and adjacency ranks higher
    BOOST_CHECK(c.ids("file system") == (V{"a_phrase", "b_apart"}));
}

BOOST_AUTO_TEST_CASE(title_outweighs_body) {
    Corpus c = filler(Corpus());
    c.add("body", "weekly plan", "notes about kafka");
    c.add("title", "notes about kafka", "weekly plan");
    BOOST_CHECK(c.ids("kafka") == (V{"title", "body"}));
}

BOOST_AUTO_TEST_CASE(bm25_properties) {
    Corpus c = filler(Corpus());
    c.add("common1", "a", "apple common");
    c.add("common2", "b", "common");
    c.add("common3", "c", "common");
    c.add("rare", "d", "zebra");
    c.add("both", "e", "zebra apple");
    std::string longer = "zebra";
    for (int i = 0; i < 200; ++i) longer += " filler";
    c.add("long", "f", longer);
    auto r = c.search("common zebra");
    BOOST_REQUIRE(r.size() >= 4);
    // the rarer term weighs more: a note with only zebra beats one with only common
    auto pos = [&](const std::string& id) {
        for (std::size_t i = 0; i < r.size(); ++i)
            if (r[i].id == id) return i;
        return r.size();
    };
    BOOST_CHECK_LT(pos("rare"), pos("common2"));
    BOOST_CHECK_LT(pos("rare"), pos("long"));  // long notes are normalised
    auto two = c.search("zebra apple");
    BOOST_CHECK_EQUAL(two.at(0).id, "both");  // more matched terms rank higher
}

BOOST_AUTO_TEST_CASE(term_frequency_saturates) {
    Corpus c = filler(Corpus());
    c.add("one", "x", "rust");
    c.add("many", "x", "rust rust rust rust rust rust rust rust rust rust rust rust rust rust rust rust");
    auto r = c.search("rust");
    BOOST_REQUIRE_EQUAL(r.size(), 2u);
    BOOST_CHECK_GT(r[0].score, r[1].score);
    BOOST_CHECK_LT(r[0].score, 3.0 * r[1].score);
}

BOOST_AUTO_TEST_CASE(scores_are_deterministic_and_ties_break_by_time_then_id) {
    Corpus c = filler(Corpus());
    c.add("b", "same", "text", 5);
    c.add("a", "same", "text", 5);
    c.add("c", "same", "text", 9);
    auto r1 = c.search("same text");
    auto r2 = c.search("same text");
    BOOST_REQUIRE_EQUAL(r1.size(), 3u);
    BOOST_CHECK_EQUAL(r1[0].score, r2[0].score);  // bit-identical
    BOOST_CHECK(c.ids("same text") == (V{"c", "b", "a"}));
}

BOOST_AUTO_TEST_CASE(statistics_are_what_the_caller_gives) {
    // Another user's notes never enter: the same note scores the same whatever else exists
    // outside the supplied statistics.
    ParsedQuery q = parse_query("kafka");
    QueryStats s;
    s.corpus = CorpusStats{10, 20, 100};
    s.df["kafka"] = 2;
    const FieldIndex t = index_field("kafka"), b = index_field("stream");
    auto x = Ranker(q, s).score(t.terms, b.terms);
    auto y = Ranker(q, s).score(t.terms, b.terms);
    BOOST_REQUIRE(x && y);
    BOOST_CHECK_EQUAL(*x, *y);
    s.df["kafka"] = 9;
    BOOST_CHECK_LT(*Ranker(q, s).score(t.terms, b.terms), *x);
}

// The estimate from postings is the stored-terms score bit for bit when it says exact, and
// never below it otherwise, for terms, prefixes, phrases, proximity and unknown counts alike.
BOOST_AUTO_TEST_CASE(estimate_is_the_exact_score_or_an_upper_bound) {
    Corpus c;
    const char* words[] = {"alpha", "beta", "gamma", "delta", "file", "system", "kubernetes",
                           "kube", "cafe", "the", "of"};
    unsigned seed = 7;
    auto next = [&] { return seed = seed * 1103515245u + 12345u, (seed >> 16) & 0x7fff; };
    for (int i = 0; i < 60; ++i) {
        std::string title, body;
        for (unsigned k = next() % 4; k > 0; --k) title += std::string(words[next() % 11]) + " ";
        for (unsigned k = 1 + next() % 30; k > 0; --k) body += std::string(words[next() % 11]) + " ";
        c.add("n" + std::to_string(i), title, body, 1000 + i);
    }
    const char* queries[] = {"alpha", "alpha beta", "\"file system\"", "kube", "the cafe",
                             "gamma \"delta alpha\" syst", "beta beta of", "system file"};
    int exact = 0, bounded = 0, exact_from_positions = 0;
    for (const char* text : queries) {
        const ParsedQuery q = parse_query(text);
        Ranker r(q, c.stats(q));
        const auto plan = r.retrieval_plan(1000000);
        // with_positions: the rows carry where the term occurs, as the store writes them
        auto postings_of = [&](const std::string& term, bool with_positions) {
            std::vector<Posting> out;
            for (std::size_t i = 0; i < c.notes.size(); ++i) {
                const auto& n = c.notes[i];
                auto a = split_terms(n.title.terms), b = split_terms(n.body.terms);
                std::vector<int> at_a, at_b;
                for (std::size_t k = 0; k < a.size(); ++k)
                    if (a[k] == term) at_a.push_back(static_cast<int>(k));
                for (std::size_t k = 0; k < b.size(); ++k)
                    if (b[k] == term) at_b.push_back(static_cast<int>(k));
                const int tt = static_cast<int>(at_a.size()), tb = static_cast<int>(at_b.size());
                if (tt + tb > 0)
                    out.push_back(Posting{static_cast<long long>(i), 0, n.updated_us, tt, tb,
                                          static_cast<int>(n.title.length),
                                          static_cast<int>(n.body.length),
                                          with_positions ? encode_positions(at_a, at_b) : ""});
            }
            return out;
        };
        // mode % 3 == 0: complete lists; 1: lists of unknown extent; 2: as 1, then the open
        // terms' counts. Modes 3-5: the same with positions in the postings.
        for (int mode = 0; mode < 6; ++mode) {
            const bool with_positions = mode >= 3;
            std::vector<std::vector<Posting>> post(plan.size());
            std::vector<bool> complete(plan.size(), mode % 3 == 0);
            for (std::size_t u = 0; u < plan.size(); ++u)
                post[u] = postings_of(plan[u].term, with_positions);
            std::vector<Candidate> cands = r.bound_candidates(plan, post, complete, 1000);
            if (mode % 3 == 2) {
                for (const Ranker::OpenTerm& o : r.open_terms(cands))
                    r.add_counts(cands, o.term, postings_of(o.term, with_positions), true);
                BOOST_CHECK(r.open_terms(cands).empty());
            }
            for (const Candidate& cand : cands) {
                const auto& n = c.notes[static_cast<std::size_t>(cand.uid_hi)];
                const std::optional<double> full = r.score(n.title.terms, n.body.terms);
                const Estimate e = r.estimate(cand);
                // every count and position known: phrases and proximity need no stored terms
                if (mode == 5) BOOST_CHECK(e.exact);
                if (e.exact) {
                    ++exact;
                    exact_from_positions += with_positions && full && text != std::string("alpha");
                    BOOST_CHECK_EQUAL(e.matched, full.has_value());
                    if (full) BOOST_CHECK(e.score == *full);  // bit for bit
                } else {
                    ++bounded;
                    if (full) BOOST_CHECK_GE(e.score, *full);
                }
            }
        }
    }
    BOOST_CHECK_GT(exact, 50);    // both cases really happen
    BOOST_CHECK_GT(bounded, 50);
    BOOST_CHECK_GT(exact_from_positions, 50);
}

// A prefix clause is worth its best alternative: a known match worth more than any unknown
// alternative could be settles it (exact, bit for bit); otherwise the estimate stays a bound.
BOOST_AUTO_TEST_CASE(prefix_clause_is_exact_when_a_known_match_dominates) {
    // n0 holds `found`, the other 39 notes `frequent`
    auto check = [](const std::string& found, const std::string& frequent, bool want_exact) {
        Corpus c;
        c.add("n0", "", found + " alpha", 1);
        for (int i = 1; i < 40; ++i) c.add("n" + std::to_string(i), "", frequent + " beta gamma", 1 + i);
        const ParsedQuery q = parse_query("kube");
        Ranker r(q, c.stats(q));
        const std::vector<RetrievalUnit> plan = r.retrieval_plan(1000000);
        BOOST_REQUIRE_EQUAL(plan.size(), 2u);  // "kube" and "kubernetes"
        // only n0's posting of `found` was read, and the lists may be cut; the plan is rarest
        // first, and `found` is the rare one (in n0 alone) exactly in the case meant exact
        std::vector<std::vector<Posting>> post(2);
        post[want_exact ? 0 : 1] = {Posting{0, 0, 1, 0, 1, 0, 2, {}}};
        const auto cands = r.bound_candidates(plan, post, {false, false}, 10);
        BOOST_REQUIRE_EQUAL(cands.size(), 1u);
        const Estimate e = r.estimate(cands[0]);
        const std::optional<double> full = r.score(c.notes[0].title.terms, c.notes[0].body.terms);
        BOOST_REQUIRE(full);
        BOOST_CHECK_EQUAL(e.exact, want_exact);
        if (e.exact) BOOST_CHECK(e.score == *full);  // bit for bit
        else BOOST_CHECK_GE(e.score, *full);
        // open_terms names what is still needed: nothing once the clause is settled, else the
        // unknown alternative, needed by the one candidate
        const std::vector<Ranker::OpenTerm> open = r.open_terms(cands);
        if (want_exact) {
            BOOST_CHECK(open.empty());
        } else {
            BOOST_REQUIRE_EQUAL(open.size(), 1u);
            BOOST_CHECK_EQUAL(open[0].term, plan[0].term);  // the list that was not read
            BOOST_CHECK_EQUAL(open[0].candidates, 1u);
        }
    };
    // the rare exact stem was found: the frequent expansion (half weight, low idf) cannot
    // outweigh it even if the whole note were that word
    check("kube", "kubernetes", true);
    // the frequent expansion was found: the exact stem, in n0 or not, might outweigh it
    check("kubernetes", "kube", false);
}

BOOST_AUTO_TEST_SUITE_END()
