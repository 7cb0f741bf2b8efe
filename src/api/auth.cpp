#include "api/auth.hpp"

#include "api/errors.hpp"
#include "store/store.hpp"
#include "base/util.hpp"

namespace notesd {
namespace {

constexpr std::size_t kMaxTokenLength = 512;

ApiError not_authorized(const std::string& message, bool bad_token) {
    ApiError e(401, "NOT_AUTHORIZED", message);
    e.headers.emplace_back("WWW-Authenticate", bad_token
                                                   ? "Bearer realm=\"notesd\", error=\"invalid_token\""
                                                   : "Bearer realm=\"notesd\"");
    return e;
}

}  // namespace

std::string bearer_token(std::string_view h) {
    while (!h.empty() && (h.front() == ' ' || h.front() == '\t')) h.remove_prefix(1);
    while (!h.empty() && (h.back() == ' ' || h.back() == '\t')) h.remove_suffix(1);
    if (h.empty()) throw not_authorized("the Authorization header with a Bearer token is missing", false);
    std::size_t sp = h.find_first_of(" \t");
    std::string scheme(h.substr(0, sp));
    for (char& c : scheme) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    if (scheme != "bearer" || sp == std::string_view::npos)
        throw not_authorized("the Authorization header must use the Bearer scheme", false);
    std::string_view token = h.substr(sp);
    while (!token.empty() && (token.front() == ' ' || token.front() == '\t')) token.remove_prefix(1);
    bool ok = !token.empty() && token.size() <= kMaxTokenLength;
    for (char c : token) ok = ok && c > 0x20 && c < 0x7f;
    if (!ok) throw not_authorized("the bearer token is not valid", true);
    return std::string(token);
}

std::string token_hash(std::string_view token) { return sha256_hex(token); }

Principal authenticate(std::string_view authorization, TokenLookup& tokens) {
    std::string token = bearer_token(authorization);
    if (auto p = tokens.find_token(token_hash(token))) return *p;
    throw not_authorized("the bearer token is not valid", true);
}

}  // namespace notesd
