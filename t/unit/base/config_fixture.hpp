// What the config tests of two layers share (base/config_tests, server/config_check_tests).
#pragma once
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "base/config.hpp"

namespace notesd::test {

inline const std::string kSecret = "0123456789abcdef0123456789abcdef";  // exactly 32 characters

inline bool has_problem(const std::vector<std::string>& problems, const std::string& needle) {
    return std::any_of(problems.begin(), problems.end(),
                       [&](const std::string& p) { return p.find(needle) != std::string::npos; });
}

/// The defaults plus a secret: a configuration without problems.
inline Config valid() {
    Config c;
    c.secret = kSecret;
    return c;
}

struct ProblemCase {
    const char* key;
    const char* value;
    const char* needle;  ///< in the one problem the setting must cause
};

/// For each case: valid() with the setting applied has exactly one problem by `check` (validate
/// or check_config), and it contains the needle. db_busy_timeout_ms is lowered first, so that a
/// low request_timeout_ms is the only problem.
template <class Check>
void expect_one_problem_each(const std::vector<ProblemCase>& cases, Check check) {
    for (const auto& k : cases) {
        Config c = valid();
        c.db_busy_timeout_ms = 50;
        BOOST_TEST_REQUIRE(apply_setting(c, k.key, k.value) == "", k.key << "=" << k.value);
        const std::vector<std::string> problems = check(c);
        BOOST_TEST(problems.size() == 1u, k.key << "=" << k.value << ": " << problems.size());
        BOOST_TEST(has_problem(problems, k.needle), k.key << "=" << k.value);
    }
}

}  // namespace notesd::test
