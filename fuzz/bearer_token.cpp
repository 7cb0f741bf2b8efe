// The Authorization parser: only 401 NOT_AUTHORIZED; a token it returns is 1..512 visible ASCII
// characters, and every spelling nginx's rate-limit key also accepts (scheme in any case, blanks
// around) gives the same token.
#include "api/auth.hpp"
#include "fuzz_check.hpp"

using namespace notesd;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    const std::string_view header = notesd_fuzz::as_text(data, size);
    std::string token;
    try {
        token = bearer_token(header);
    } catch (const ApiError& e) {
        notesd_fuzz::expect_error(e, 401, "NOT_AUTHORIZED");
        return 0;
    }
    FUZZ_CHECK(!token.empty() && token.size() <= 512, std::to_string(token.size()));
    for (char c : token) FUZZ_CHECK(c > 0x20 && c < 0x7f, "a byte outside visible ASCII");
    for (const char* spelling : {"Bearer ", "bearer\t", " BEARER  ", "\tbEaReR \t"}) {
        std::string h = spelling + token;
        h += " \t";
        FUZZ_CHECK(bearer_token(h) == token, h);
    }
    return 0;
}
