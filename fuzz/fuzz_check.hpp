// Shared by the libFuzzer targets in fuzz/: a property that must hold for every input. A failed
// check aborts, so libFuzzer (or the replay in `make check`) reports it with the input saved.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "api/errors.hpp"

#define FUZZ_CHECK(cond, what)                                                              \
    do {                                                                                     \
        if (!(cond)) notesd_fuzz::fail(__FILE__, __LINE__, #cond, (what));                   \
    } while (0)

namespace notesd_fuzz {

[[noreturn]] inline void fail(const char* file, int line, const char* cond, const std::string& what) {
    std::fprintf(stderr, "%s:%d: property failed: %s (%s)\n", file, line, cond, what.c_str());
    std::abort();
}

inline std::string_view as_text(const uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

/// An ApiError must carry one of the documented status/kind pairs.
inline void expect_error(const notesd::ApiError& e, int status, const char* kind) {
    FUZZ_CHECK(e.status() == status && e.kind() == kind,
               std::to_string(e.status()) + " " + e.kind() + ": " + e.message());
    FUZZ_CHECK(!e.message().empty(), "an error without a message");
}

}  // namespace notesd_fuzz
