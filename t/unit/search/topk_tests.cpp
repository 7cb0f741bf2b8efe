#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "search/ranker.hpp"

using namespace notesd;

namespace {

// A posting of note n<k>: its uuid halves order like the ids "n1" < "n2" < ...
Posting posting(long long k, long long updated, int tt = 0, int tb = 1, int lt = 1, int lb = 10) {
    return Posting{k, 0, updated, tt, tb, lt, lb, {}};
}

std::vector<long long> note_numbers(const std::vector<Candidate>& v) {
    std::vector<long long> out;
    for (const auto& c : v) out.push_back(c.uid_hi);
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(topk)

BOOST_AUTO_TEST_CASE(retrieval_plan_takes_rarest_terms_within_budget) {
    ParsedQuery q = parse_query("alpha beta \"gamma delta\" zzz");
    QueryStats s;
    s.corpus = CorpusStats{1000, 1000, 10000};
    s.df = {{"alpha", 500}, {"beta", 20}, {"gamma", 300}, {"delta", 40}, {"zzz", 0}};
    Ranker r(q, s);
    auto plan = r.retrieval_plan(100);
    BOOST_REQUIRE_EQUAL(plan.size(), 2u);
    BOOST_CHECK_EQUAL(plan[0].term, "beta");
    BOOST_CHECK_EQUAL(plan[1].term, "delta");  // the phrase's rarest word stands for it
    plan = r.retrieval_plan(1);
    BOOST_REQUIRE_EQUAL(plan.size(), 1u);  // the rarest always, even over budget
    plan = r.retrieval_plan(1000000);
    BOOST_CHECK_EQUAL(plan.size(), 3u);  // zzz has no postings, gamma is covered by delta
}

BOOST_AUTO_TEST_CASE(candidate_bound_prefers_prescore_then_recency) {
    ParsedQuery q = parse_query("rare common");
    QueryStats s;
    s.corpus = CorpusStats{100, 100, 1000};
    s.df = {{"rare", 2}, {"common", 50}};
    Ranker r(q, s);
    auto plan = r.retrieval_plan(1000);
    BOOST_REQUIRE_EQUAL(plan.size(), 2u);
    std::vector<std::vector<Posting>> post(2);
    post[0] = {posting(1, 1), posting(2, 2)};                  // rare
    post[1] = {posting(2, 2), posting(3, 9), posting(4, 9)};   // common
    const std::vector<bool> complete{true, true};
    auto c = r.bound_candidates(plan, post, complete, 3);
    BOOST_CHECK(note_numbers(c) == (std::vector<long long>{2, 1, 4}));
    BOOST_CHECK(r.bound_candidates(plan, post, complete, 10).size() == 4u);
    // n1 is in the complete list of "common" nowhere: it has none; n2 has both, exactly
    BOOST_CHECK(r.estimate(c[1]).exact);
    BOOST_CHECK(r.estimate(c[1]).matched);
    // without the complete flags n1's count of "common" is unknown: an upper bound only
    auto open = r.bound_candidates(plan, post, {false, false}, 3);
    BOOST_CHECK(!r.estimate(open[1]).exact);
    BOOST_CHECK_GE(r.estimate(open[1]).score, r.estimate(c[1]).score);
}

BOOST_AUTO_TEST_SUITE_END()
