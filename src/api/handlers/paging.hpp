// The keyset-pagination steps both list handlers share: where a page starts and its cursor.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "api/cursor.hpp"
#include "api/errors.hpp"
#include "base/model.hpp"

namespace notesd {

struct PageStart {
    std::optional<PageKey> after;  // nullopt: the first page
    long long total = 0;
};

/// Decodes `page` (400 INVALID_CURSOR when it is not ours for this user and scope), or, on a first
/// page, counts: the total is computed once per walk and then travels in the cursor.
template <class CountFn>
PageStart start_page(const std::optional<std::string>& page, const CursorCodec& cursors,
                     long long user_id, const std::string& scope, CountFn count) {
    if (!page) return PageStart{std::nullopt, count()};
    auto state = cursors.decode(*page, user_id, scope);
    if (!state) throw invalid_cursor();
    return PageStart{PageKey{state->sort_us, state->id}, state->total};
}

/// Trims the one-row lookahead and returns the next cursor when another page follows.
template <class Item>
std::optional<std::string> finish_page(std::vector<Item>& rows, int limit, OrderBy order,
                                       long long total, const CursorCodec& cursors,
                                       long long user_id, const std::string& scope) {
    if (static_cast<int>(rows.size()) <= limit) return std::nullopt;
    rows.resize(static_cast<std::size_t>(limit));
    const Item& last = rows.back();
    const long long sort = order == OrderBy::CreatedAt ? last.created_us : last.updated_us;
    return cursors.encode({sort, last.id, total, std::nullopt}, user_id, scope);
}

}  // namespace notesd
