// The merger's CPU priority (server/merger_priority.hpp): low while it computes, its own around
// each write transaction of a step and while a user's index is behind. Each case runs on a
// thread of its own: a nice value is a thread's on Linux, so the test runner keeps its own.
#include <boost/test/unit_test.hpp>

#include <thread>

#include "server/merger_priority.hpp"

using notesd::MergerPriority;

namespace {

template <class F>
void on_own_thread(F&& f) {
    std::thread t(f);
    t.join();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(merger_priority)

BOOST_AUTO_TEST_CASE(low_while_computing_own_while_writing_or_behind) {
    on_own_thread([] {
        const int own = MergerPriority::current();
        MergerPriority p(7);
        if (!p.usable()) {
            // a process that could not take its priority back never lowers it
            BOOST_TEST(MergerPriority::current() == own);
            p.before_write();
            p.after_write();
            BOOST_TEST(MergerPriority::current() == own);
            return;
        }
        BOOST_TEST(p.own() == own);
        BOOST_TEST(MergerPriority::current() == own + 7);
        p.before_write();
        BOOST_TEST(MergerPriority::current() == own);
        p.after_write();
        BOOST_TEST(MergerPriority::current() == own + 7);
        p.set_behind(true);
        BOOST_TEST(MergerPriority::current() == own);
        p.before_write();
        p.after_write();
        BOOST_TEST(MergerPriority::current() == own);  // still behind
        p.set_behind(false);
        BOOST_TEST(MergerPriority::current() == own + 7);
    });
}

BOOST_AUTO_TEST_CASE(nice_zero_or_past_19_changes_nothing_beyond_19) {
    on_own_thread([] {
        const int own = MergerPriority::current();
        MergerPriority none(0);
        BOOST_TEST(!none.usable());
        BOOST_TEST(MergerPriority::current() == own);
    });
    on_own_thread([] {
        const int own = MergerPriority::current();
        MergerPriority most(40);
        BOOST_TEST(MergerPriority::current() == (most.usable() ? 19 : own));
    });
}

BOOST_AUTO_TEST_SUITE_END()
