#include "index/positions.hpp"

#include <charconv>

namespace notesd {
namespace {

// Digits by std::to_chars into a stack buffer: a std::to_string per position was a string built
// and appended for each of the ~200 terms of a note.
void put_gaps(std::string& out, const std::vector<int>& positions) {
    int last = 0;
    char buf[16];
    for (std::size_t i = 0; i < positions.size(); ++i) {
        char* at = buf;
        if (i > 0) *at++ = ',';
        at = std::to_chars(at, buf + sizeof buf, positions[i] - last).ptr;
        out.append(buf, at);
        last = positions[i];
    }
}

// One field's gaps into positions; false unless `text` holds exactly `count` ascending ones.
bool get_gaps(std::string_view text, int count, std::vector<int>& out) {
    out.clear();
    if (count < 0) return false;
    out.reserve(static_cast<std::size_t>(count));
    long long pos = 0;
    std::size_t i = 0;
    while (i < text.size()) {
        if (!out.empty()) {
            if (text[i] != ',') return false;
            ++i;
        }
        const std::size_t start = i;
        long long gap = 0;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9' && i - start < 9)
            gap = gap * 10 + (text[i++] - '0');
        if (i == start || (i < text.size() && text[i] != ',')) return false;
        if (!out.empty() && gap == 0) return false;  // strictly ascending
        pos += gap;
        if (pos > 0x7fffffffLL) return false;
        out.push_back(static_cast<int>(pos));
    }
    return static_cast<int>(out.size()) == count;
}

}  // namespace

std::string encode_positions(const std::vector<int>& title, const std::vector<int>& body) {
    if (title.size() + body.size() > kMaxStoredPositions) return {};
    std::string out;
    put_gaps(out, title);
    out += ';';
    put_gaps(out, body);
    return out;
}

bool decode_positions(std::string_view text, int title_tf, int body_tf, std::vector<int>& title,
                      std::vector<int>& body) {
    const std::size_t split = text.find(';');
    if (text.empty() || split == std::string_view::npos) return false;
    return get_gaps(text.substr(0, split), title_tf, title) &&
           get_gaps(text.substr(split + 1), body_tf, body);
}

}  // namespace notesd
