// The one Boost.Test main for every unit suite (t/unit/<module>_tests.cpp, one suite each).
#define BOOST_TEST_MODULE notesd
#include <boost/test/included/unit_test.hpp>
