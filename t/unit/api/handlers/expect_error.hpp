// Checks that a handler call fails with one ApiError.
#pragma once
#include <boost/test/unit_test.hpp>

#include <functional>
#include <string>

#include "api/errors.hpp"

namespace notesd::test {

/// call() throws an ApiError with this status and kind (and field, when one is given).
inline void expect_api_error(const std::function<void()>& call, int status, const std::string& kind,
                             const std::string& field = {}) {
    try {
        call();
        BOOST_ERROR("expected " + kind + ", the call succeeded");
    } catch (const ApiError& e) {
        BOOST_CHECK_EQUAL(e.status(), status);
        BOOST_CHECK_EQUAL(e.kind(), kind);
        if (!field.empty()) BOOST_CHECK_EQUAL(e.field(), field);
    }
}

}  // namespace notesd::test
