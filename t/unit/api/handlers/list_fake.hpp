// A NoteReader over vectors for the list handlers' tests: it pages like the store (order by
// the sort value then id, descending, after a keyset position) and records every call, and
// whether each ran inside a read view (ReadViews).
#pragma once
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "api/cursor.hpp"
#include "store/store.hpp"

namespace notesd::test {

class FakeNoteReader : public NoteReader, public ReadViews {
public:
    std::vector<NoteItem> notes;              // of user kUser
    std::vector<CollectionItem> collections;  // of user kUser
    static constexpr long long kUser = 7;

    struct ListCall {
        long long user_id = 0;
        OrderBy order = OrderBy::UpdatedAt;
        std::optional<PageKey> after;
        int limit = 0;
        bool with_content = false;
    };
    std::vector<long long> count_calls;  // user ids
    std::vector<ListCall> list_calls;
    NoteFilter last_note_filter;
    /// The read views begun, and for every count and list call, the view it ran in (0: none).
    int views_begun = 0;
    int open_view = 0;
    std::vector<int> call_views;

    void begin_read() override { open_view = ++views_begun; }
    void end_read() noexcept override { open_view = 0; }

    long long count_notes(long long user_id, const NoteFilter& f) override {
        count_calls.push_back(user_id);
        call_views.push_back(open_view);
        last_note_filter = f;
        return user_id == kUser ? static_cast<long long>(notes.size()) : 0;
    }
    std::vector<NoteItem> list_notes(long long user_id, const NoteFilter& f, OrderBy order,
                                     const std::optional<PageKey>& after, int limit,
                                     bool with_content) override {
        list_calls.push_back(ListCall{user_id, order, after, limit, with_content});
        call_views.push_back(open_view);
        last_note_filter = f;
        if (user_id != kUser) return {};
        std::vector<NoteItem> out = page(notes, order, after, limit);
        if (!with_content)
            for (NoteItem& n : out) n.content.reset();
        return out;
    }
    long long count_collections(long long user_id, const CollectionFilter&) override {
        count_calls.push_back(user_id);
        call_views.push_back(open_view);
        return user_id == kUser ? static_cast<long long>(collections.size()) : 0;
    }
    std::vector<CollectionItem> list_collections(long long user_id, const CollectionFilter&,
                                                 OrderBy order, const std::optional<PageKey>& after,
                                                 int limit) override {
        list_calls.push_back(ListCall{user_id, order, after, limit, false});
        call_views.push_back(open_view);
        if (user_id != kUser) return {};
        return page(collections, order, after, limit);
    }

private:
    template <class Item>
    static std::vector<Item> page(std::vector<Item> items, OrderBy order,
                                  const std::optional<PageKey>& after, int limit) {
        auto sort_of = [&](const Item& i) {
            return order == OrderBy::UpdatedAt ? i.updated_us : i.created_us;
        };
        std::sort(items.begin(), items.end(), [&](const Item& a, const Item& b) {
            return sort_of(a) != sort_of(b) ? sort_of(a) > sort_of(b) : a.id > b.id;
        });
        std::vector<Item> out;
        for (const Item& i : items) {
            if (after && !(sort_of(i) < after->sort_us ||
                           (sort_of(i) == after->sort_us && i.id < after->id)))
                continue;
            if (static_cast<int>(out.size()) == limit) break;
            out.push_back(i);
        }
        return out;
    }
};

/// A fake reader, a cursor codec and the principal of the fake's user.
struct ListFixture {
    FakeNoteReader reader;
    CursorCodec cursors{"test secret"};
    Principal who{FakeNoteReader::kUser, 1};
};

}  // namespace notesd::test
