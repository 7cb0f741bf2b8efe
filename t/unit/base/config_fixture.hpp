// What the config tests of two layers share (base/config_tests, server/config_check_tests).
#pragma once
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

}  // namespace notesd::test
