// Derived fields: title, snippet, flags and link kinds (src/markdown.cpp).
#include <boost/test/unit_test.hpp>

#include "ingest/markdown.hpp"
#include "base/util.hpp"

using namespace notesd;

namespace {

DerivedNote derive(const std::string& md) { return derive_note(md, std::nullopt); }

bool has_link(const DerivedNote& d, AttachmentKind kind, const std::string& target, bool local) {
    for (const LinkRef& l : d.links)
        if (l.kind == kind && l.target == target && l.local == local) return true;
    return false;
}

std::string words(int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += (i ? " " : "") + std::string("word") + std::to_string(i);
    return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(markdown)

BOOST_AUTO_TEST_CASE(title_strips_heading_markers_and_emphasis) {
    BOOST_CHECK_EQUAL(derive("# Hello *World*\n\nbody").title, "Hello World");
    BOOST_CHECK_EQUAL(derive("## **Bold** title ##\n").title, "Bold title");
    BOOST_CHECK_EQUAL(derive("Setext title\n============\n\nbody").title, "Setext title");
    BOOST_CHECK_EQUAL(derive("_Emphasised line_\nsecond line").title, "Emphasised line");
    BOOST_CHECK_EQUAL(derive("\n\n   \n# After blanks\n").title, "After blanks");
    BOOST_CHECK_EQUAL(derive("#   Spaced    out   \n").title, "Spaced out");
    BOOST_CHECK_EQUAL(derive("# Use `git log`\n").title, "Use git log");
    BOOST_CHECK_EQUAL(derive("# [Linked](https://example.com) title\n").title, "Linked title");
    BOOST_CHECK_EQUAL(derive("").title, "");
    BOOST_CHECK_EQUAL(derive("\n  \n").title, "");
    BOOST_CHECK_EQUAL(derive("<!-- comment -->\n\nReal title").title, "Real title");
    BOOST_CHECK_EQUAL(derive("- [ ] buy milk\n- [x] eggs").title, "buy milk");
}

BOOST_AUTO_TEST_CASE(title_is_first_line_of_a_paragraph_rest_goes_to_snippet) {
    DerivedNote d = derive("First line\nsecond line\n\nnext paragraph");
    BOOST_CHECK_EQUAL(d.title, "First line");
    BOOST_CHECK_EQUAL(d.snippet, "second line next paragraph");
}

BOOST_AUTO_TEST_CASE(explicit_title_wins_and_repeated_first_line_is_skipped) {
    DerivedNote d = derive_note("# My Note\n\nThe body.", std::string("My Note"));
    BOOST_CHECK_EQUAL(d.title, "My Note");
    BOOST_CHECK_EQUAL(d.snippet, "The body.");
    d = derive_note("# Something else\n\nThe body.", std::string("My Note"));
    BOOST_CHECK_EQUAL(d.title, "My Note");
    BOOST_CHECK_EQUAL(d.snippet, "Something else The body.");
    d = derive_note("first\nsecond", std::string("  "));  // blank: derived from the text
    BOOST_CHECK_EQUAL(d.title, "first");
    BOOST_CHECK_EQUAL(d.snippet, "second");
}

BOOST_AUTO_TEST_CASE(snippet_removes_markup_keeps_link_image_and_code_text) {
    DerivedNote d = derive(
        "# T\n\nSome **bold** and _it_ ~~gone~~ text with a [link](https://x.org) and "
        "![alt text](a.png).\n\n> quoted\n\n```sh\necho   hi\nls\n```\n\n| a | b |\n|---|---|\n"
        "| c | d |\n\n<div>html</div>\n\n---\n\nend `code`");
    BOOST_CHECK_EQUAL(d.snippet,
                      "Some bold and it gone text with a link and alt text. quoted echo hi ls "
                      "a b c d end code");
}

BOOST_AUTO_TEST_CASE(snippet_short_text_is_kept_whole) {
    std::string body = words(10);
    BOOST_CHECK_EQUAL(derive("# T\n\n" + body).snippet, body);
    std::string exact(200, 'x');  // exactly 200 characters: no ellipsis
    BOOST_CHECK_EQUAL(derive("# T\n\n" + exact).snippet, exact);
}

BOOST_AUTO_TEST_CASE(snippet_cut_at_word_boundary_with_ellipsis) {
    std::string body = words(80);
    std::string s = derive("# T\n\n" + body).snippet;
    BOOST_CHECK(utf8_length(s) <= 200);
    BOOST_REQUIRE(s.size() > 3);
    BOOST_CHECK_EQUAL(s.substr(s.size() - 3), "\xE2\x80\xA6");
    std::string kept = s.substr(0, s.size() - 3);
    BOOST_CHECK_EQUAL(body.compare(0, kept.size(), kept), 0);
    BOOST_CHECK_EQUAL(body[kept.size()], ' ');  // ends exactly before a space
    BOOST_CHECK(utf8_length(s) > 180);
}

BOOST_AUTO_TEST_CASE(snippet_counts_unicode_characters_never_breaks_utf8) {
    std::string body;
    for (int i = 0; i < 150; ++i) body += "\xC3\xA9t\xC3\xA9 ";  // "été "
    std::string s = derive("# T\n\n" + body).snippet;
    BOOST_CHECK(valid_utf8(s));
    BOOST_CHECK(utf8_length(s) <= 200);
    BOOST_CHECK(utf8_length(s) >= 195);
    std::string cjk;
    for (int i = 0; i < 300; ++i) cjk += "\xE6\x97\xA5";  // 日 without spaces
    s = derive("# T\n\n" + cjk).snippet;
    BOOST_CHECK(valid_utf8(s));
    BOOST_CHECK_EQUAL(utf8_length(s), 200u);
    std::string emoji;
    for (int i = 0; i < 120; ++i) emoji += "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD";  // thumbs + skin tone
    s = derive("# T\n\n" + emoji).snippet;
    BOOST_CHECK(valid_utf8(s));
    BOOST_CHECK(utf8_length(s) <= 200);
    // a grapheme (base + modifier) is never split: odd count = base + ellipsis only
    BOOST_CHECK_EQUAL(utf8_length(s) % 2, 1u);
}

BOOST_AUTO_TEST_CASE(tasks_open_closed_and_not_in_code) {
    BOOST_CHECK_EQUAL(derive("# T\n\n- [ ] open").flags, kFlagTasks | kFlagOpenTasks);
    BOOST_CHECK_EQUAL(derive("# T\n\n- [x] done").flags, kFlagTasks);
    BOOST_CHECK_EQUAL(derive("# T\n\n* [X] done").flags, kFlagTasks);
    BOOST_CHECK_EQUAL(derive("# T\n\n1. [ ] numbered").flags, kFlagTasks | kFlagOpenTasks);
    BOOST_CHECK_EQUAL(derive("# T\n\n- [x] a\n  - [ ] nested").flags, kFlagTasks | kFlagOpenTasks);
    BOOST_CHECK_EQUAL(derive("# T\n\n```\n- [ ] not a task\n```").flags, 0);
    BOOST_CHECK_EQUAL(derive("# T\n\n    - [ ] indented code").flags, 0);
    BOOST_CHECK_EQUAL(derive("# T\n\n`- [ ] inline code`").flags, 0);
    BOOST_CHECK_EQUAL(derive("# T\n\n- [] no space\n- [y] other").flags, 0);
    BOOST_CHECK_EQUAL(derive("# T\n\n[ ] not a list item").flags, 0);
    BOOST_CHECK_EQUAL(derive("- [ ] buy milk").snippet, "");
}

BOOST_AUTO_TEST_CASE(image_embeds) {
    for (const char* t : {"a.png", "b.JPG", "c.jpeg", "d.gif", "e.webp", "f.svg", "g.avif",
                          "h.heic", "i.bmp", "j.tiff", "k.PNG?raw=1", "l.png#frag"}) {
        DerivedNote d = derive(std::string("# T\n\n![x](") + t + ")");
        BOOST_CHECK_MESSAGE(d.flags == kFlagImages, t);
        BOOST_CHECK_MESSAGE(has_link(d, AttachmentKind::Image, t, true), t);
    }
    DerivedNote d = derive("# T\n\n![x](data:image/png;base64,iVBORw0KGgo=)");
    BOOST_CHECK_EQUAL(d.flags, kFlagImages);
    BOOST_CHECK(!d.links.at(0).local);
    // remote images count for contains_images but are not local attachments
    d = derive("# T\n\n![shot](https://i.imgur.com/abc.png)");
    BOOST_CHECK_EQUAL(d.flags, kFlagImages);
    BOOST_CHECK(has_link(d, AttachmentKind::Image, "https://i.imgur.com/abc.png", false));
    // image syntax without a known extension is still an image
    BOOST_CHECK_EQUAL(derive("![r](http://source.unsplash.com/random/1200x600)").flags, kFlagImages);
    // a plain link to a remote png is neither an image embed nor a file
    BOOST_CHECK_EQUAL(derive("# T\n\n[png](https://x.org/a.png)").flags, 0);
    // a link to a local image is an image attachment
    BOOST_CHECK_EQUAL(derive("# T\n\n[see](shots/a.png)").flags, kFlagImages);
    // reference-style images and autolinked images in code are handled by the parser
    BOOST_CHECK_EQUAL(derive("# T\n\n![x][r]\n\n[r]: pic.gif").flags, kFlagImages);
    BOOST_CHECK_EQUAL(derive("# T\n\n`![x](a.png)`").flags, 0);
}

BOOST_AUTO_TEST_CASE(file_links_and_embeds) {
    for (const char* t : {"a.pdf", "b.docx", "c.doc", "d.odt", "e.rtf", "f.txt", "g.xlsx",
                          "h.xls", "i.ods", "j.csv", "k.pptx", "l.odp", "m.zip", "n.tar.gz",
                          "o.tgz", "p.7z", "q.rar", "r.epub", "s.PDF?dl=1", "t.mp4"}) {
        DerivedNote d = derive(std::string("# T\n\n[doc](files/") + t + ")");
        BOOST_CHECK_MESSAGE(d.flags == kFlagFiles, t);
        BOOST_CHECK_MESSAGE(has_link(d, AttachmentKind::File, std::string("files/") + t, true), t);
    }
    BOOST_CHECK_EQUAL(derive("# T\n\n[r](https://example.com/report.pdf)").flags, kFlagFiles);
    BOOST_CHECK_EQUAL(derive("# T\n\n![r](report.pdf)").flags, kFlagFiles);
    BOOST_CHECK_EQUAL(derive("# T\n\nsee https://example.com/a.zip now").flags, kFlagFiles);
    // web pages, notes and source code are not files
    for (const char* t : {"https://example.com", "https://example.com/docs/", "https://example.zip",
                          "https://example.com/page.html", "other-note.md", "notes/other",
                          "https://github.com/a/b/blob/main/x.js", "mailto:a@example.com",
                          "#section"}) {
        BOOST_CHECK_MESSAGE(derive(std::string("# T\n\n[x](") + t + ")").flags == 0, t);
    }
}

BOOST_AUTO_TEST_CASE(audio_is_neither_image_nor_file) {
    for (const char* t : {"a.mp3", "b.m4a", "c.wav", "d.ogg", "e.oga", "f.opus", "g.flac",
                          "h.aac", "i.weba", "J.MP3"}) {
        DerivedNote d = derive(std::string("# T\n\n[memo](rec/") + t + ")");
        BOOST_CHECK_MESSAGE(d.flags == 0, t);
        BOOST_CHECK_MESSAGE(has_link(d, AttachmentKind::Audio, std::string("rec/") + t, true), t);
    }
    DerivedNote d = derive("# T\n\n![memo](data:audio/ogg;base64,AAAA)");
    BOOST_CHECK_EQUAL(d.flags, 0);
    BOOST_CHECK(has_link(d, AttachmentKind::Audio, "data:audio/ogg;base64,AAAA", false));
}

BOOST_AUTO_TEST_CASE(obsidian_embeds_and_wikilinks) {
    DerivedNote d = derive("# T\n\nBefore ![[photo one.png]] after");
    BOOST_CHECK_EQUAL(d.flags, kFlagImages);
    BOOST_CHECK(has_link(d, AttachmentKind::Image, "photo one.png", true));
    BOOST_CHECK_EQUAL(d.snippet, "Before after");
    d = derive("# T\n\n![[scan.pdf|the scan]] and ![[memo.m4a]] and [[Other note]] and "
               "[[spec.docx|Spec]]");
    BOOST_CHECK_EQUAL(d.flags, kFlagFiles);
    BOOST_CHECK(has_link(d, AttachmentKind::File, "scan.pdf", true));
    BOOST_CHECK(has_link(d, AttachmentKind::Audio, "memo.m4a", true));
    BOOST_CHECK(has_link(d, AttachmentKind::File, "spec.docx", true));
    BOOST_CHECK_EQUAL(d.links.size(), 3u);  // [[Other note]] is a note link, not an attachment
    BOOST_CHECK_EQUAL(d.snippet, "the scan and and Other note and Spec");
    BOOST_CHECK_EQUAL(derive("# T\n\n```\n![[a.png]]\n```").flags, 0);
    BOOST_CHECK_EQUAL(derive("# T\n\n![[Just a note]]").flags, 0);
}

BOOST_AUTO_TEST_CASE(kind_and_locality_helpers) {
    BOOST_CHECK(kind_of_target("x.tar.gz") == AttachmentKind::File);
    BOOST_CHECK(!kind_of_target("README"));
    BOOST_CHECK(!kind_of_target("https://example.com/"));
    BOOST_CHECK(!kind_of_target("file."));
    BOOST_CHECK(kind_of_target("DATA:IMAGE/PNG;base64,xx") == AttachmentKind::Image);
    BOOST_CHECK(is_local_target("a/b.png"));
    BOOST_CHECK(is_local_target("../b.png"));
    BOOST_CHECK(is_local_target("/abs/b.png"));
    BOOST_CHECK(is_local_target("file:///abs/b.png"));
    BOOST_CHECK(!is_local_target("https://x.org/b.png"));
    BOOST_CHECK(!is_local_target("//cdn.x.org/b.png"));
    BOOST_CHECK(!is_local_target("data:image/png;base64,xx"));
}

BOOST_AUTO_TEST_CASE(invalid_utf8_never_reaches_the_output) {
    DerivedNote d = derive(std::string("# Ti\xFFtle\n\nbo\xC3" "dy"));
    BOOST_CHECK(valid_utf8(d.title));
    BOOST_CHECK(valid_utf8(d.snippet));
}

BOOST_AUTO_TEST_CASE(deep_nesting_does_not_overflow) {
    DerivedNote d = derive(std::string(100000, '>') + " deep\n\n" + std::string(50000, '[') + "x");
    BOOST_CHECK(valid_utf8(d.title));
    d = derive("# T\n\n" + std::string(20000, '>') + " - [ ] deep task");
    BOOST_CHECK(valid_utf8(d.snippet));
}

BOOST_AUTO_TEST_SUITE_END()
