#include "api/render.hpp"

#include <cmath>
#include <cstdio>

#include "base/util.hpp"

namespace notesd {
namespace {

void escape_into(std::string& out, std::string_view s) {
    static const char kHex[] = "0123456789abcdef";
    const bool ok = valid_utf8(s);
    out += '"';
    for (std::size_t i = 0; i < s.size(); ++i) {
        // Runs of bytes that stay as they are go in one append.
        std::size_t run = i;
        while (run < s.size()) {
            const auto b = static_cast<unsigned char>(s[run]);
            if (b < 0x20 || b == '"' || b == '\\' || (b >= 0x80 && !ok)) break;
            ++run;
        }
        if (run > i) {
            out.append(s.data() + i, run - i);
            i = run;
            if (i == s.size()) break;
        }
        auto c = static_cast<unsigned char>(s[i]);
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                if (c < 0x20) {
                    out += "\\u00";
                    out += kHex[c >> 4];
                    out += kHex[c & 15];
                } else if (c >= 0x80 && !ok) {
                    // Slow path only for corrupt data: keep valid sequences, replace the rest.
                    std::size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
                    if (len > 1 && i + len <= s.size() && valid_utf8(s.substr(i, len))) {
                        out.append(s.data() + i, len);
                        i += len - 1;
                    } else {
                        out += "\xEF\xBF\xBD";
                    }
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    out += '"';
}

}  // namespace

void JsonOut::comma() {
    if (need_comma_) out_ += ',';
    need_comma_ = true;
}

JsonOut& JsonOut::open(char bracket) {
    comma();
    out_ += bracket;
    need_comma_ = false;
    return *this;
}

JsonOut& JsonOut::close(char bracket) {
    out_ += bracket;
    need_comma_ = true;
    return *this;
}

JsonOut& JsonOut::begin_object() { return open('{'); }
JsonOut& JsonOut::end_object() { return close('}'); }
JsonOut& JsonOut::begin_array() { return open('['); }
JsonOut& JsonOut::end_array() { return close(']'); }

JsonOut& JsonOut::key(std::string_view k) {
    comma();
    escape_into(out_, k);
    out_ += ':';
    need_comma_ = false;
    return *this;
}

JsonOut& JsonOut::str(std::string_view v) {
    comma();
    escape_into(out_, v);
    return *this;
}

JsonOut& JsonOut::num(long long v) {
    comma();
    out_ += std::to_string(v);
    return *this;
}

JsonOut& JsonOut::real(double v) {
    comma();
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", std::isfinite(v) ? v : 0.0);
    out_ += buf;
    return *this;
}

JsonOut& JsonOut::boolean(bool v) {
    comma();
    out_ += v ? "true" : "false";
    return *this;
}

JsonOut& JsonOut::null() {
    comma();
    out_ += "null";
    return *this;
}

JsonOut& JsonOut::str_array(const std::vector<std::string>& v) {
    begin_array();
    for (const auto& s : v) str(s);
    return end_array();
}

void write_note(JsonOut& j, const NoteItem& n) {
    j.begin_object();
    j.key("id").str(n.id);
    j.key("title").str(n.title);
    j.key("snippet").str(n.snippet);
    if (n.content) j.key("content").str(*n.content);
    j.key("created_at").str(format_time(n.created_us));
    j.key("updated_at").str(format_time(n.updated_us));
    j.key("collection_ids").str_array(n.collection_ids);
    j.key("audio_recording_ids").str_array(n.audio_recording_ids);
    j.end_object();
}

void write_collection(JsonOut& j, const CollectionItem& c) {
    j.begin_object();
    j.key("id").str(c.id);
    j.key("title").str(c.title);
    j.key("description");
    if (c.description)
        j.str(*c.description);
    else
        j.null();
    j.key("created_at").str(format_time(c.created_us));
    j.key("updated_at").str(format_time(c.updated_us));
    j.key("note_count").num(c.note_count);
    j.end_object();
}

std::string render_note_page(const std::string& request_id, const std::vector<NoteItem>& items,
                             long long total, const std::optional<std::string>& next_page) {
    JsonOut j;
    j.begin_object().key("request_id").str(request_id).key("results").begin_array();
    for (const auto& n : items) write_note(j, n);
    j.end_array().key("total").num(total);
    if (next_page) j.key("next_page").str(*next_page);  // omitted on the last page (seed rule)
    j.end_object();
    return j.take();
}

std::string render_search_page(const std::string& request_id, const std::vector<NoteItem>& items,
                               long long total, long long offset, int limit, bool has_next_page,
                               const std::string& snapshot_id) {
    JsonOut j;
    j.begin_object().key("request_id").str(request_id).key("results").begin_array();
    for (const auto& n : items) write_note(j, n);
    j.end_array().key("total").num(total).key("offset").num(offset).key("limit").num(limit);
    j.key("has_next_page").boolean(has_next_page).key("snapshot_id").str(snapshot_id);
    j.end_object();
    return j.take();
}

std::string render_collection_page(const std::string& request_id,
                                   const std::vector<CollectionItem>& items, long long total,
                                   const std::optional<std::string>& next_page) {
    JsonOut j;
    j.begin_object().key("request_id").str(request_id).key("results").begin_array();
    for (const auto& c : items) write_collection(j, c);
    j.end_array().key("total").num(total).key("next_page");
    if (next_page)
        j.str(*next_page);
    else
        j.null();  // present and null on the last page (seed rule)
    j.end_object();
    return j.take();
}

}  // namespace notesd
