// Domain values to JSON envelopes. A small streaming writer: no DOM for large pages.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/model.hpp"

namespace notesd {

/// Appends compact JSON to a string. Strings are escaped; invalid UTF-8 becomes U+FFFD, so the
/// output is always valid JSON whatever the database holds.
class JsonOut {
public:
    JsonOut& begin_object();
    JsonOut& end_object();
    JsonOut& begin_array();
    JsonOut& end_array();
    JsonOut& key(std::string_view k);
    JsonOut& str(std::string_view v);
    JsonOut& num(long long v);
    /// A finite number with 6 significant digits (scores); non-finite values are written as 0.
    JsonOut& real(double v);
    JsonOut& boolean(bool v);
    JsonOut& null();
    JsonOut& str_array(const std::vector<std::string>& v);
    const std::string& text() const { return out_; }
    std::string take() { return std::move(out_); }

private:
    void comma();
    JsonOut& open(char bracket);
    JsonOut& close(char bracket);
    std::string out_;
    bool need_comma_ = false;
};

/// Writes one note list item (contract section 2) as the next value.
void write_note(JsonOut& j, const NoteItem& n);
void write_collection(JsonOut& j, const CollectionItem& c);

std::string render_note_page(const std::string& request_id, const std::vector<NoteItem>& items,
                             long long total, const std::optional<std::string>& next_page);
/// The search response of contract section 5 (every field always present).
std::string render_search_page(const std::string& request_id, const std::vector<NoteItem>& items,
                               long long total, long long offset, int limit, bool has_next_page,
                               const std::string& snapshot_id);
std::string render_collection_page(const std::string& request_id,
                                   const std::vector<CollectionItem>& items, long long total,
                                   const std::optional<std::string>& next_page);

}  // namespace notesd
