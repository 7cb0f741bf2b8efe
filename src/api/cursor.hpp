// Keyset cursors: position + carried total, HMAC-bound to the user and the query's scope.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace notesd {

struct CursorState {
    long long sort_us = 0;  // sort value of the last row returned
    std::string id;         // uuid of the last row returned
    long long total = 0;    // total computed on the first page, carried so later pages stay cheap
    /// A second sort value for orders with two (extended search's relevance order: the
    /// score's bits in sort_us, updated_us here); such cursors have a longer payload.
    std::optional<long long> tie;
};

class CursorCodec {
public:
    explicit CursorCodec(std::string_view secret);
    /// base64url text (no padding) of version, position, total and a MAC over them, the user and
    /// `scope` (the endpoint, order_by and every effective filter in canonical form).
    std::string encode(const CursorState& s, long long user_id, std::string_view scope) const;
    /// nullopt when the text was altered, truncated, or issued for another user or scope.
    std::optional<CursorState> decode(std::string_view text, long long user_id,
                                      std::string_view scope) const;

private:
    std::string mac(std::string_view payload, long long user_id, std::string_view scope) const;
    std::string key_;
};

}  // namespace notesd
