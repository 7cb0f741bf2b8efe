#include "ingest/markdown.hpp"

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>
#include <utf8proc.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>
#include <mutex>

#include "index/text.hpp"

namespace notesd {
namespace {

// Extension tables. Decisions (documented in API.md / notesctl.8):
// - txt counts as a file (a plain-text document), source code and markup (.js, .json, .html,
//   .md) do not: links to them are almost always web pages or other notes;
// - video containers, webm included, are files: browsers' audio-only recordings use .weba,
//   .ogg or .m4a, and a .webm link is far more often a screen recording.
const char* const kImageExt[] = {"png", "jpg", "jpeg", "jfif", "gif", "webp", "svg", "avif",
                                 "heic", "heif", "bmp", "tif", "tiff", "ico"};
const char* const kAudioExt[] = {"mp3", "m4a", "wav", "ogg", "oga", "opus", "flac", "aac",
                                 "weba", "amr", "aif", "aiff", "caf", "wma", "mka"};
const char* const kFileExt[] = {
    "pdf", "doc", "docx", "odt", "rtf", "txt", "pages", "tex", "epub", "mobi", "djvu",
    "xls", "xlsx", "ods", "csv", "tsv", "numbers", "ppt", "pptx", "odp", "key",
    "zip", "tar", "gz", "tgz", "bz2", "tbz2", "xz", "txz", "zst", "7z", "rar",
    "dmg", "iso", "deb", "rpm", "apk", "msi", "exe",
    "mp4", "m4v", "mov", "mkv", "avi", "webm", "wmv",
    "ics", "vcf", "psd", "ai", "sketch", "fig", "dwg"};

template <std::size_t N>
bool in_table(const char* const (&table)[N], const std::string& ext) {
    return std::any_of(std::begin(table), std::end(table),
                       [&](const char* e) { return ext == e; });
}

std::string lower_ascii(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Length of a URL scheme ("https:" -> 5), 0 when there is none. One letter is a drive letter.
std::size_t scheme_length(std::string_view t) {
    std::size_t i = 0;
    while (i < t.size() && (std::isalnum(static_cast<unsigned char>(t[i])) || t[i] == '+' ||
                            t[i] == '-' || t[i] == '.'))
        ++i;
    if (i < 2 || i >= t.size() || t[i] != ':' || !std::isalpha(static_cast<unsigned char>(t[0])))
        return 0;
    return i;
}

std::optional<AttachmentKind> kind_of_media_type(std::string_view data_url) {
    std::string mime = lower_ascii(data_url.substr(5, data_url.find_first_of(";,") - 5));
    if (mime.rfind("image/", 0) == 0) return AttachmentKind::Image;
    if (mime.rfind("audio/", 0) == 0) return AttachmentKind::Audio;
    if (mime.rfind("video/", 0) == 0 || mime.rfind("application/", 0) == 0)
        return AttachmentKind::File;
    return std::nullopt;
}

// One parser configuration for every note; extensions are registered once per process.
cmark_parser* new_parser() {
    static std::once_flag once;
    std::call_once(once, [] { cmark_gfm_core_extensions_ensure_registered(); });
    cmark_parser* p = cmark_parser_new(CMARK_OPT_VALIDATE_UTF8);
    for (const char* name : {"tasklist", "table", "strikethrough", "autolink"}) {
        if (cmark_syntax_extension* ext = cmark_find_syntax_extension(name))
            cmark_parser_attach_syntax_extension(p, ext);
    }
    return p;
}

bool is_inline(cmark_node* n) {
    return (cmark_node_get_type(n) & CMARK_NODE_TYPE_MASK) == CMARK_NODE_TYPE_INLINE;
}

// The walk is recursive; a hostile note of thousands of nested quotes or lists must not
// exhaust the stack, and nothing readable lives that deep.
constexpr int kMaxDepth = 256;

struct DepthGuard {
    explicit DepthGuard(int& d) : d_(d) { ++d_; }
    ~DepthGuard() { --d_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
    int& d_;
};

// Collects plain-text lines and link references from the syntax tree. Every leaf block starts
// a line, and so does every soft or hard break inside one; code block lines are kept as text.
class Walker {
public:
    explicit Walker(DerivedNote& out) : out_(out) {}

    void block(cmark_node* n) {
        DepthGuard guard(depth_);
        if (depth_ > kMaxDepth) return;
        switch (cmark_node_get_type(n)) {
        case CMARK_NODE_CODE_BLOCK: code_block(cmark_node_get_literal(n)); return;
        case CMARK_NODE_HTML_BLOCK:
        case CMARK_NODE_THEMATIC_BREAK: return;  // markup only, no text
        case CMARK_NODE_ITEM: task_item(n); break;
        default: break;
        }
        cmark_node* child = cmark_node_first_child(n);
        if (child && is_inline(child)) {
            end_line();
            for (; child; child = cmark_node_next(child)) inline_node(child);
            flush_text();
            end_line();
            return;
        }
        for (; child; child = cmark_node_next(child)) block(child);
    }

    std::vector<std::string> take_lines() {
        end_line();
        return std::move(lines_);
    }

private:
    void task_item(cmark_node* n) {
        const char* type = cmark_node_get_type_string(n);
        if (!type || std::strcmp(type, "tasklist") != 0) return;
        out_.flags |= kFlagTasks;
        if (!cmark_gfm_extensions_get_tasklist_item_checked(n)) out_.flags |= kFlagOpenTasks;
    }

    void code_block(const char* literal) {
        end_line();
        std::string_view code = literal ? literal : "";
        std::size_t start = 0;
        while (start < code.size()) {
            std::size_t nl = code.find('\n', start);
            if (nl == std::string_view::npos) nl = code.size();
            cur_.append(code.substr(start, nl - start));
            end_line();
            start = nl + 1;
        }
    }

    void inline_node(cmark_node* n) {
        DepthGuard guard(depth_);
        if (depth_ > kMaxDepth) return;
        cmark_node_type type = cmark_node_get_type(n);
        if (type == CMARK_NODE_TEXT) {
            // Adjacent text nodes are joined first so that [[wikilinks]] split by the parser
            // at brackets are seen whole.
            const char* lit = cmark_node_get_literal(n);
            if (lit) pending_ += lit;
            return;
        }
        flush_text();
        switch (type) {
        case CMARK_NODE_CODE: {
            const char* lit = cmark_node_get_literal(n);
            if (lit) cur_ += lit;
            return;
        }
        case CMARK_NODE_SOFTBREAK:
        case CMARK_NODE_LINEBREAK: end_line(); return;
        case CMARK_NODE_HTML_INLINE:
        case CMARK_NODE_FOOTNOTE_REFERENCE: return;
        case CMARK_NODE_LINK:
        case CMARK_NODE_IMAGE: {
            const char* url = cmark_node_get_url(n);
            add_ref(url ? url : "", type == CMARK_NODE_IMAGE, false);
            break;
        }
        default: break;
        }
        for (cmark_node* c = cmark_node_first_child(n); c; c = cmark_node_next(c)) inline_node(c);
        flush_text();
    }

    // Plain text with Obsidian-style [[target|alias]] links and ![[target|alias]] embeds:
    // a link shows its alias or target, an embed only its alias.
    void flush_text() {
        std::string_view t = pending_;
        std::size_t pos = 0;
        while (pos < t.size()) {
            std::size_t open = t.find("[[", pos);
            std::size_t close = open == std::string_view::npos ? open : t.find("]]", open + 2);
            if (close == std::string_view::npos) break;
            std::string_view inner = t.substr(open + 2, close - open - 2);
            if (inner.empty() || inner.find('[') != std::string_view::npos) {
                cur_.append(t.substr(pos, open + 1 - pos));
                pos = open + 1;
                continue;
            }
            bool embed = open > pos && t[open - 1] == '!';
            cur_.append(t.substr(pos, open - pos - (embed ? 1 : 0)));
            std::size_t bar = inner.find('|');
            std::string_view target = inner.substr(0, bar);
            std::string_view alias =
                bar == std::string_view::npos ? std::string_view() : inner.substr(bar + 1);
            add_ref(std::string(target), embed, true);
            cur_.append(!alias.empty() ? alias : (embed ? std::string_view() : target));
            pos = close + 2;
        }
        cur_.append(t.substr(std::min(pos, t.size())));
        pending_.clear();
    }

    void add_ref(const std::string& target, bool embed, bool wikilink) {
        std::string_view trimmed = target;
        while (!trimmed.empty() && is_space(trimmed.front())) trimmed.remove_prefix(1);
        while (!trimmed.empty() && is_space(trimmed.back())) trimmed.remove_suffix(1);
        if (trimmed.empty() || trimmed.front() == '#') return;  // same-page anchor
        std::optional<AttachmentKind> kind = kind_of_target(trimmed);
        // Markdown image syntax declares an image even when the URL has no extension
        // (https://source.unsplash.com/random); ![[Name]] without one embeds another note.
        if (!kind && embed && !wikilink && lower_ascii(trimmed.substr(0, 5)) != "data:")
            kind = AttachmentKind::Image;
        if (!kind) return;
        LinkRef ref{*kind, std::string(trimmed), embed, is_local_target(trimmed)};
        if (ref.kind == AttachmentKind::Image && (ref.embed || ref.local)) out_.flags |= kFlagImages;
        if (ref.kind == AttachmentKind::File) out_.flags |= kFlagFiles;
        out_.links.push_back(std::move(ref));
    }

    void end_line() {
        lines_.push_back(std::move(cur_));
        cur_.clear();
    }

    DerivedNote& out_;
    int depth_ = 0;
    std::vector<std::string> lines_;
    std::string cur_;
    std::string pending_;
};

bool same_text(std::string_view a, std::string_view b) {
    return lower_ascii(a) == lower_ascii(b);
}

}  // namespace

std::optional<AttachmentKind> kind_of_target(std::string_view target) {
    std::size_t scheme = scheme_length(target);
    if (scheme == 4 && lower_ascii(target.substr(0, 5)) == "data:") return kind_of_media_type(target);
    std::string_view path = target.substr(0, target.find_first_of("?#"));
    if (scheme != 0 && path.substr(scheme + 1, 2) == "//") {
        // Only the path after the host has an extension: "https://example.zip" is a site.
        std::size_t slash = path.find('/', scheme + 3);
        path = slash == std::string_view::npos ? std::string_view() : path.substr(slash);
    }
    std::size_t slash = path.find_last_of("/\\");
    std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
    std::size_t dot = name.rfind('.');
    if (dot == std::string_view::npos || dot + 1 == name.size()) return std::nullopt;
    std::string ext = lower_ascii(name.substr(dot + 1));
    if (in_table(kImageExt, ext)) return AttachmentKind::Image;
    if (in_table(kAudioExt, ext)) return AttachmentKind::Audio;
    if (in_table(kFileExt, ext)) return AttachmentKind::File;
    return std::nullopt;
}

bool is_local_target(std::string_view target) {
    if (target.empty() || target.substr(0, 2) == "//") return false;  // protocol-relative URL
    std::size_t scheme = scheme_length(target);
    return scheme == 0 || lower_ascii(target.substr(0, scheme)) == "file";
}

DerivedNote derive_note(std::string_view markdown,
                        const std::optional<std::string>& explicit_title) {
    DerivedNote out;
    std::unique_ptr<cmark_parser, void (*)(cmark_parser*)> parser(new_parser(), cmark_parser_free);
    cmark_parser_feed(parser.get(), markdown.data(), markdown.size());
    std::unique_ptr<cmark_node, void (*)(cmark_node*)> doc(cmark_parser_finish(parser.get()),
                                                           cmark_node_free);
    Walker walker(out);
    walker.block(doc.get());
    std::vector<std::string> lines = walker.take_lines();
    for (std::string& l : lines) l = collapse_whitespace(l);

    auto first = std::find_if(lines.begin(), lines.end(),
                              [](const std::string& l) { return !l.empty(); });
    std::string title = explicit_title ? collapse_whitespace(*explicit_title) : std::string();
    if (!title.empty()) {
        if (first != lines.end() && same_text(*first, title)) ++first;  // "# Title" repeated
    } else if (first != lines.end()) {
        title = *first++;
    }
    std::string body;
    for (auto it = first; it != lines.end(); ++it) {
        if (it->empty()) continue;
        if (!body.empty()) body += ' ';
        body += *it;
    }
    out.title = truncate_text(title, kTitleMaxChars);
    out.snippet = truncate_text(body, kSnippetMaxChars);
    out.plain_text = std::move(body);
    return out;
}

}  // namespace notesd
