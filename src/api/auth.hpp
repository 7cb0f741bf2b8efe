// Bearer token -> Principal, or 401.
#pragma once
#include <string>
#include <string_view>

#include "base/model.hpp"

namespace notesd {

class TokenLookup;

/// The token in an `Authorization: Bearer <token>` header value (scheme case-insensitive).
/// Throws ApiError 401 NOT_AUTHORIZED (with WWW-Authenticate) when missing or malformed.
/// nginx keys its rate limits on the same token with a regex that mirrors this parse
/// ($notesd_rate_key in nginx/notesd-site.conf): change both (t/fault/test_nginx_limits.py).
std::string bearer_token(std::string_view authorization);
/// Looks the token's hash up; throws 401 for unknown or revoked tokens.
Principal authenticate(std::string_view authorization, TokenLookup& tokens);
/// The stored form of a token (the raw token is never stored).
std::string token_hash(std::string_view token);

}  // namespace notesd
