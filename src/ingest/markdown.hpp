// Derived fields of a note (title, snippet, contains_* flags, attachment references), computed
// once at write time by walking the cmark-gfm syntax tree (GFM task lists, tables,
// strikethrough, autolinks; Obsidian-style [[wikilinks]] and ![[embeds]]).
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/model.hpp"

namespace notesd {

constexpr std::size_t kSnippetMaxChars = 200;
constexpr std::size_t kTitleMaxChars = 200;

/// A link or embed whose target has a recognised attachment kind.
struct LinkRef {
    AttachmentKind kind = AttachmentKind::File;
    std::string target;  // as written in the note
    bool embed = false;  // ![..](..) or ![[..]]
    bool local = false;  // a path, not a URL: the importer turns these into attachments
    bool operator==(const LinkRef& o) const {
        return kind == o.kind && target == o.target && embed == o.embed && local == o.local;
    }
};

struct DerivedNote {
    std::string title;
    std::string snippet;
    std::string plain_text;        // the whole body after the title as plain text (search)
    int flags = 0;                 // kFlag* of model.hpp
    std::vector<LinkRef> links;    // in document order, duplicates kept
};

/// Title, snippet, flags and links of a markdown note. explicit_title (front matter, JSON)
/// wins over the first line when it is present and not blank.
DerivedNote derive_note(std::string_view markdown, const std::optional<std::string>& explicit_title);

/// The attachment kind of a link target by its extension (query and fragment ignored, case
/// insensitive) or data: media type; nullopt for web pages, notes and unknown kinds.
std::optional<AttachmentKind> kind_of_target(std::string_view target);
/// True when the target is a path (relative or absolute, or file:) rather than a URL.
bool is_local_target(std::string_view target);

}  // namespace notesd
