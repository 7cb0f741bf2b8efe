// Import of markdown folders and JSON Lines (src/import.cpp, src/front_matter.cpp) against an
// in-memory NoteWriter that checks what a database would: collections exist before their notes.
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <map>
#include <set>
#include <stdexcept>

#include "ingest/demo.hpp"
#include "ingest/import.hpp"
#include "base/util.hpp"

using namespace notesd;
namespace fs = std::filesystem;

namespace {

bool same_note(const NoteInput& a, const NoteInput& b) {
    if (a.attachments.size() != b.attachments.size()) return false;
    for (std::size_t i = 0; i < a.attachments.size(); ++i) {
        const Attachment &x = a.attachments[i], &y = b.attachments[i];
        if (x.id != y.id || x.kind != y.kind || x.target != y.target) return false;
    }
    return a.id == b.id && a.title == b.title && a.snippet == b.snippet && a.content == b.content &&
           a.created_us == b.created_us && a.updated_us == b.updated_us && a.flags == b.flags &&
           a.collection_ids == b.collection_ids;
}

// The writer role import uses, over maps.
class FakeWriter : public NoteWriter {
public:
    std::map<std::string, NoteInput> notes;
    std::map<std::string, CollectionInput> collections;
    int batches = 0;
    int fail_on_batch = 0;  // > 0: that write_batch call throws, as a killed process would stop

    std::vector<WriteOutcome> write_batch(long long user, const std::vector<CollectionInput>& cols,
                                          const std::vector<NoteInput>& batch) override {
        if (++batches == fail_on_batch) throw std::runtime_error("simulated crash");
        std::string scope = std::to_string(user) + ":";  // ids are unique per user
        for (const CollectionInput& c : cols) collections[scope + c.id] = c;
        std::vector<WriteOutcome> out;
        for (const NoteInput& n : batch) {
            for (const std::string& cid : n.collection_ids)
                if (!collections.count(scope + cid)) throw std::runtime_error("foreign key: " + cid);
            auto it = notes.find(scope + n.id);
            out.push_back(it == notes.end() ? WriteOutcome::Inserted
                          : same_note(it->second, n) ? WriteOutcome::Unchanged
                                                     : WriteOutcome::Updated);
            notes[scope + n.id] = n;
        }
        return out;
    }
    const NoteInput* by_title(const std::string& t) const {
        for (const auto& [id, n] : notes)
            if (n.title == t) return &n;
        return nullptr;
    }
    const CollectionInput* collection(const std::string& title) const {
        for (const auto& [id, c] : collections)
            if (c.title == title) return &c;
        return nullptr;
    }

    bool delete_note(long long user, const std::string& id) override {
        return notes.erase(std::to_string(user) + ":" + id) > 0;
    }
};

std::string source_dir() {
    if (const char* s = std::getenv("NOTESD_SRCDIR")) return s;
    if (const char* s = std::getenv("srcdir")) return s;
    // __FILE__ is as the compiler saw it: absolute, relative to the build directory, or
    // "t/unit/ingest/import_tests.cpp" in an in-tree build.
    std::string dir =
        fs::path(__FILE__).parent_path().parent_path().parent_path().parent_path().string();
    return dir.empty() ? "." : dir;
}

std::string fixtures() { return source_dir() + "/t/fixtures/import"; }

std::string shared_dir() {
    if (const char* s = std::getenv("NOTESD_SHARED")) return s;
    return source_dir() + "/../shared";
}

long long mtime_of(const std::string& p) {
    struct stat st {};
    BOOST_REQUIRE(::stat(p.c_str(), &st) == 0);
    return st.st_mtim.tv_sec * 1000000LL + st.st_mtim.tv_nsec / 1000;
}

bool has_error(const ImportReport& r, const std::string& path_end, const std::string& reason_part,
               long line = 0) {
    for (const ImportIssue& i : r.errors) {
        bool path_ok = i.path.size() >= path_end.size() &&
                       i.path.compare(i.path.size() - path_end.size(), path_end.size(), path_end) == 0;
        if (path_ok && i.line == line && i.reason.find(reason_part) != std::string::npos) return true;
    }
    return false;
}

const Attachment* attachment(const NoteInput& n, const std::string& target) {
    for (const Attachment& a : n.attachments)
        if (a.target == target) return &a;
    return nullptr;
}

struct TempDir {
    fs::path path;
    TempDir() {
        char tmpl[] = "/tmp/notesd-import-XXXXXX";
        BOOST_REQUIRE(::mkdtemp(tmpl));
        path = tmpl;
    }
    ~TempDir() { std::error_code ec; fs::remove_all(path, ec); }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(import)

BOOST_AUTO_TEST_CASE(front_matter_subset) {
    FrontMatter fm;
    std::string err;
    std::string body = split_front_matter(
        "---\ntitle: 'It''s \"here\"'\nid: 6f1c3c4e-8a51-4c8e-9a43-2f1d7a6b9c01\ncreated: 2024-01-02\n"
        "collections: a\nextra:\n  nested: [x, y]\n...\nbody\n", fm, err);
    BOOST_CHECK_EQUAL(err, "");
    BOOST_CHECK_EQUAL(body, "body\n");
    BOOST_CHECK_EQUAL(fm.title.value_or("?"), "It's \"here\"");
    BOOST_CHECK_EQUAL(fm.id.value_or("?"), "6f1c3c4e-8a51-4c8e-9a43-2f1d7a6b9c01");
    BOOST_CHECK_EQUAL(format_time(fm.created_us.value_or(0)), "2024-01-02T00:00:00Z");
    BOOST_CHECK(fm.collections == std::vector<std::string>{"a"});

    FrontMatter none;
    BOOST_CHECK_EQUAL(split_front_matter("# Title\n---\n", none, err), "# Title\n---\n");
    BOOST_CHECK(!none.title);

    const char* bad[] = {"---\ntitle: x\n", "---\ntitle: [a, b]\n---\n", "---\ntitle: \"open\n---\n",
                         "---\ntitle: a\ntitle: b\n---\n", "---\ncreated: 2024-13-01\n---\n",
                         "---\ncreated: 1\ncreated_at: 2\n---\n", "---\ntitle: |\n  block\n---\n",
                         "---\n  indented: first\n---\n", "---\ncollections: [a, [b]]\n---\n"};
    for (const char* text : bad) {
        FrontMatter f;
        std::string e;
        split_front_matter(text, f, e);
        BOOST_CHECK_MESSAGE(!e.empty(), text);
    }
}

BOOST_AUTO_TEST_CASE(import_time_formats) {
    auto t = [](const char* s) { auto v = parse_import_time(s); return v ? format_time(*v) : "none"; };
    BOOST_CHECK_EQUAL(t("2024-05-04T14:20:11Z"), "2024-05-04T14:20:11Z");
    BOOST_CHECK_EQUAL(t("2024-05-04T16:20:11+02:00"), "2024-05-04T14:20:11Z");
    BOOST_CHECK_EQUAL(t("2024-05-04"), "2024-05-04T00:00:00Z");
    BOOST_CHECK_EQUAL(t("2024-05-04 14:20"), "2024-05-04T14:20:00Z");
    BOOST_CHECK_EQUAL(t("2024-05-04 14:20:11"), "2024-05-04T14:20:11Z");
    BOOST_CHECK_EQUAL(t("2024-05-04T14:20:11.5"), "2024-05-04T14:20:11.500Z");
    BOOST_CHECK_EQUAL(t("2024-05-04 16:20:11+02:00"), "2024-05-04T14:20:11Z");
    for (const char* s : {"", "yesterday", "2024-02-30", "2024-05-04 25:00", "04/05/2024", "2024-5-4"})
        BOOST_CHECK_MESSAGE(!parse_import_time(s), s);
}

BOOST_AUTO_TEST_CASE(markdown_folder_outcomes_and_report) {
    FakeWriter store;
    std::string root = fixtures() + "/md";
    ImportReport r = import_path(store, 7, root);
    BOOST_CHECK_EQUAL(r.notes_new, 14);
    BOOST_CHECK_EQUAL(r.notes(), 14);
    BOOST_CHECK_EQUAL(store.notes.size(), 14u);
    BOOST_CHECK_EQUAL(r.collections, 7);  // tasks media front lang/go misc + Travel Reading
    BOOST_CHECK_EQUAL(store.collections.size(), 7u);
    BOOST_CHECK_EQUAL(r.errors.size(), 5u);
    BOOST_CHECK(has_error(r, "broken/unclosed.md", "front matter: not closed"));
    BOOST_CHECK(has_error(r, "broken/bad-id.md", "id is not a UUID"));
    BOOST_CHECK(has_error(r, "broken/bad-date.md", "created is not a date"));
    BOOST_CHECK(has_error(r, "broken/bad-line.md", "line 3: expected 'key: value'"));
    BOOST_CHECK(has_error(r, "broken/invalid-utf8.md", "not valid UTF-8"));
    BOOST_CHECK_EQUAL(format_summary(r),
                      "imported 14 notes (14 new, 0 updated, 0 unchanged), 7 collections, 5 errors");
    BOOST_CHECK(!store.by_title("Hidden folders are ignored"));
    BOOST_CHECK(store.by_title("."));             // misc/..md: dot files are notes
    BOOST_CHECK(!has_error(r, "._images.md", "")); // macOS resource forks are skipped
    BOOST_CHECK(!store.collection("broken"));  // a folder with no valid note is no collection

    const NoteInput* root_note = store.by_title("A note at the root");
    BOOST_REQUIRE(root_note);
    BOOST_CHECK(root_note->collection_ids.empty());
    BOOST_CHECK_EQUAL(root_note->snippet, "Files at the root of the folder belong to no collection.");
    BOOST_CHECK_EQUAL(root_note->updated_us, mtime_of(root + "/root-note.md"));
    BOOST_CHECK_EQUAL(root_note->created_us, root_note->updated_us);
    BOOST_CHECK_EQUAL(root_note->content, "# A note at the root\n\nFiles at the root of the folder belong to no collection.\n");
    BOOST_CHECK_EQUAL(root_note->id, stable_uuid("notesd:note:7:md:md/root-note.md"));

    const NoteInput* nested = store.by_title("Goroutines");
    BOOST_REQUIRE(nested);
    BOOST_CHECK(nested->collection_ids == std::vector<std::string>{collection_uuid(7, "lang/go")});
    const CollectionInput* go = store.collection("lang/go");
    BOOST_REQUIRE(go);
    BOOST_CHECK_EQUAL(go->id, collection_uuid(7, "lang/go"));
    BOOST_CHECK(!go->description);
    const NoteInput* upper = store.by_title("Upper-case extension");
    BOOST_REQUIRE(upper);
    BOOST_CHECK(upper->collection_ids == std::vector<std::string>{collection_uuid(7, "misc")});
}

BOOST_AUTO_TEST_CASE(markdown_folder_flags_and_attachments) {
    FakeWriter store;
    import_path(store, 7, fixtures() + "/md");
    const NoteInput* chores = store.by_title("Weekly chores");
    const NoteInput* done = store.by_title("Done list");
    const NoteInput* code = store.by_title("Task syntax in code");
    const NoteInput* images = store.by_title("Whiteboard photos");
    const NoteInput* files = store.by_title("Quarterly papers");
    const NoteInput* audio = store.by_title("Voice memos");
    BOOST_REQUIRE(chores && done && code && images && files && audio);
    BOOST_CHECK_EQUAL(chores->flags, kFlagTasks | kFlagOpenTasks);
    BOOST_CHECK_EQUAL(done->flags, kFlagTasks);
    BOOST_CHECK_EQUAL(code->flags, 0);
    BOOST_CHECK(code->attachments.empty());
    BOOST_CHECK_EQUAL(images->flags, kFlagImages);
    BOOST_CHECK_EQUAL(files->flags, kFlagFiles);
    BOOST_CHECK_EQUAL(audio->flags, 0);

    BOOST_CHECK_EQUAL(images->attachments.size(), 2u);  // the remote logo is no attachment
    const Attachment* diagram = attachment(*images, "img/diagram.png");
    BOOST_REQUIRE(diagram);
    BOOST_CHECK(diagram->kind == AttachmentKind::Image);
    BOOST_CHECK(parse_uuid(diagram->id) == diagram->id);
    BOOST_REQUIRE(attachment(*images, "photo.JPG"));
    BOOST_CHECK(attachment(*images, "photo.JPG")->kind == AttachmentKind::Image);

    BOOST_CHECK_EQUAL(files->attachments.size(), 2u);
    BOOST_REQUIRE(attachment(*files, "files/q3-report.pdf"));
    BOOST_CHECK(attachment(*files, "files/q3-report.pdf")->kind == AttachmentKind::File);
    BOOST_CHECK(attachment(*files, "budget.xlsx")->kind == AttachmentKind::File);

    BOOST_CHECK_EQUAL(audio->attachments.size(), 2u);
    BOOST_REQUIRE(attachment(*audio, "audio/standup.m4a") && attachment(*audio, "voice memo.ogg"));
    BOOST_CHECK(attachment(*audio, "audio/standup.m4a")->kind == AttachmentKind::Audio);
    BOOST_CHECK(attachment(*audio, "voice memo.ogg")->kind == AttachmentKind::Audio);
}

BOOST_AUTO_TEST_CASE(markdown_folder_front_matter_variants) {
    FakeWriter store;
    std::string root = fixtures() + "/md";
    import_path(store, 7, root);
    const NoteInput* full = store.by_title("Trip: Lisbon, day 1");
    BOOST_REQUIRE(full);
    BOOST_CHECK_EQUAL(full->id, "6f1c3c4e-8a51-4c8e-9a43-2f1d7a6b9c01");
    BOOST_CHECK_EQUAL(format_time(full->created_us), "2024-05-04T14:20:11Z");
    BOOST_CHECK_EQUAL(format_time(full->updated_us), "2024-05-06T06:00:00.500Z");
    BOOST_CHECK(full->collection_ids ==
                (std::vector<std::string>{collection_uuid(7, "front"), collection_uuid(7, "Travel"),
                                          collection_uuid(7, "lang/go")}));
    BOOST_CHECK_EQUAL(full->content, "We walked up to the castle.\n");  // front matter removed
    BOOST_CHECK_EQUAL(full->snippet, "We walked up to the castle.");

    const NoteInput* list = store.by_title("Reading list");
    BOOST_REQUIRE(list);
    BOOST_CHECK_EQUAL(format_time(list->created_us), "2024-03-05T00:00:00Z");
    BOOST_CHECK_EQUAL(format_time(list->updated_us), "2024-03-06T10:30:00Z");
    BOOST_CHECK(list->collection_ids ==
                (std::vector<std::string>{collection_uuid(7, "front"), collection_uuid(7, "Reading"),
                                          collection_uuid(7, "lang/go")}));
    BOOST_CHECK_EQUAL(list->snippet, "Books for the summer.");

    const NoteInput* repeat = store.by_title("Same title");
    BOOST_REQUIRE(repeat);
    BOOST_CHECK_EQUAL(repeat->snippet, "The body starts here.");

    const NoteInput* only = store.by_title("Only updated is given");
    BOOST_REQUIRE(only);
    BOOST_CHECK_EQUAL(format_time(only->updated_us), "2023-01-02T03:04:05Z");
    BOOST_CHECK_EQUAL(only->created_us, only->updated_us);  // min(mtime, updated)

    // collections span their notes' times
    const CollectionInput* travel = store.collection("Travel");
    BOOST_REQUIRE(travel);
    BOOST_CHECK_EQUAL(travel->created_us, full->created_us);
    BOOST_CHECK_EQUAL(travel->updated_us, full->updated_us);
    const CollectionInput* go = store.collection("lang/go");
    BOOST_REQUIRE(go);
    BOOST_CHECK_EQUAL(go->created_us, list->created_us);
}

BOOST_AUTO_TEST_CASE(reimport_is_unchanged_and_edits_update) {
    TempDir tmp;
    fs::copy(fixtures() + "/md", tmp.path / "notes", fs::copy_options::recursive);
    FakeWriter store;
    std::string root = (tmp.path / "notes").string();
    ImportReport first = import_path(store, 7, root);
    BOOST_CHECK_EQUAL(first.notes_new, 14);
    auto before = store.notes;
    ImportReport again = import_path(store, 7, root + "/");  // trailing slash: same ids
    BOOST_CHECK_EQUAL(format_summary(again),
                      "imported 14 notes (0 new, 0 updated, 14 unchanged), 7 collections, 5 errors");
    BOOST_CHECK_EQUAL(store.notes.size(), 14u);
    {
        std::ofstream out(tmp.path / "notes/tasks/only-closed.md", std::ios::app);
        out << "3. [ ] one more thing\n";
    }
    ImportReport edited = import_path(store, 7, root);
    BOOST_CHECK_EQUAL(edited.notes_updated, 1);
    BOOST_CHECK_EQUAL(edited.notes_unchanged, 13);
    BOOST_CHECK_EQUAL(store.by_title("Done list")->flags, kFlagTasks | kFlagOpenTasks);
    // another user gets other ids
    ImportReport other = import_path(store, 8, root);
    BOOST_CHECK_EQUAL(other.notes_new, 14);
    BOOST_CHECK_EQUAL(store.notes.size(), 28u);
}

BOOST_AUTO_TEST_CASE(jsonl_notes_collections_and_bad_lines) {
    FakeWriter store;
    std::string file = fixtures() + "/mem.jsonl";
    ImportReport r = import_path(store, 7, file);
    BOOST_CHECK_EQUAL(r.notes_new, 4);
    BOOST_CHECK_EQUAL(r.collections, 2);
    BOOST_CHECK_EQUAL(r.errors.size(), 8u);
    BOOST_CHECK(has_error(r, "mem.jsonl", "unknown collection id ffffffff-0000-4000-8000-000000000000", 6));
    BOOST_CHECK(has_error(r, "mem.jsonl", "duplicate id (first on line 4)", 7));
    BOOST_CHECK(has_error(r, "mem.jsonl", "created_at is not a date-time", 8));
    BOOST_CHECK(has_error(r, "mem.jsonl", "invalid JSON", 9));
    BOOST_CHECK(has_error(r, "mem.jsonl", "not a JSON object", 10));
    BOOST_CHECK(has_error(r, "mem.jsonl", "type must be", 11));
    BOOST_CHECK(has_error(r, "mem.jsonl", "content must be a string", 12));
    BOOST_CHECK(has_error(r, "mem.jsonl", "not valid UTF-8", 13));
    BOOST_CHECK(format_issue(r.errors.front()).find("mem.jsonl:") != std::string::npos);

    const CollectionInput* recipes = store.collection("Recipes");
    const CollectionInput* work = store.collection("Work");
    BOOST_REQUIRE(recipes && work);
    BOOST_CHECK_EQUAL(recipes->description.value_or("?"), "Things to cook");
    BOOST_CHECK(!work->description);
    BOOST_CHECK_EQUAL(work->id, "0b0f2a9e-1c1d-4c38-9f4c-5f0c7e2c9a02");  // lower-cased

    const NoteInput* pancakes = store.by_title("Pancakes");
    BOOST_REQUIRE(pancakes);
    BOOST_CHECK_EQUAL(pancakes->flags, kFlagTasks | kFlagOpenTasks | kFlagImages);
    BOOST_CHECK_EQUAL(format_time(pancakes->updated_us), "2024-03-02T08:00:00.250Z");
    BOOST_CHECK(pancakes->collection_ids == std::vector<std::string>{recipes->id});
    BOOST_REQUIRE_EQUAL(pancakes->attachments.size(), 1u);
    BOOST_CHECK(pancakes->attachments[0].kind == AttachmentKind::Image);

    const NoteInput* standup = store.by_title("Standup notes");
    BOOST_REQUIRE(standup);
    BOOST_CHECK_EQUAL(standup->snippet, "Discussed the roadmap; recording in audio.");
    BOOST_CHECK_EQUAL(standup->flags, kFlagFiles);
    BOOST_CHECK_EQUAL(format_time(standup->created_us), "2024-03-05T08:00:00Z");
    BOOST_CHECK(standup->collection_ids == (std::vector<std::string>{work->id, recipes->id}));
    BOOST_REQUIRE(attachment(*standup, "standup.mp3"));
    BOOST_CHECK(attachment(*standup, "standup.mp3")->kind == AttachmentKind::Audio);

    const NoteInput* legacy = store.by_title("Plain note with a legacy id");
    BOOST_REQUIRE(legacy);
    BOOST_CHECK(parse_uuid(legacy->id) == legacy->id);
    BOOST_CHECK(legacy->collection_ids.empty());
    BOOST_CHECK_EQUAL(legacy->updated_us, legacy->created_us);
    BOOST_REQUIRE(store.by_title("No id at all"));

    ImportReport again = import_path(store, 7, file);
    BOOST_CHECK_EQUAL(again.notes_unchanged, 4);
    BOOST_CHECK_EQUAL(again.notes_new + again.notes_updated, 0);
    BOOST_CHECK_EQUAL(store.notes.size(), 4u);
}

BOOST_AUTO_TEST_CASE(bad_paths_throw) {
    FakeWriter store;
    BOOST_CHECK_THROW(import_path(store, 7, fixtures() + "/does-not-exist"), std::runtime_error);
    BOOST_CHECK_THROW(import_path(store, 7, fixtures() + "/md/root-note.md"), std::runtime_error);
}

namespace {

// The til corpus of ../shared (a test that needs it fails without it).
std::string til_corpus() {
    std::string til = shared_dir() + "/corpus/til";
    BOOST_REQUIRE_MESSAGE(fs::is_directory(til), "corpus missing: " + til + " (set NOTESD_SHARED)");
    return til;
}

ImportOptions batches_of(std::size_t notes) {
    ImportOptions o;
    o.batch_size = notes;
    return o;
}

}  // namespace

// A JSON Lines file is written while it is read: a collection found after some batches rides
// with the next one, and a note that names a collection further down waits for it.
BOOST_AUTO_TEST_CASE(jsonl_collections_anywhere_in_the_file_exist_before_their_notes) {
    TempDir dir;
    const std::string file = (dir.path / "late.jsonl").string();
    const std::string x = "0b0f2a9e-1c1d-4c38-9f4c-5f0c7e2c9a11", y = "0b0f2a9e-1c1d-4c38-9f4c-5f0c7e2c9a22",
                      z = "0b0f2a9e-1c1d-4c38-9f4c-5f0c7e2c9a33";
    {
        std::ofstream out(file);
        out << R"({"type":"note","title":"A","content":"a","collection_ids":[")" << x << "\"]}\n"
            << R"({"type":"note","title":"B","content":"b"})" << "\n"
            << R"({"type":"note","title":"B2","content":"b2"})" << "\n"
            << R"({"type":"collection","id":")" << y << R"(","title":"Y"})" << "\n"
            << R"({"type":"note","title":"C","content":"c","collection_ids":[")" << y << "\"]}\n"
            << R"({"type":"note","title":"D","content":"d","collection_ids":[")" << y << "\",\"" << z << "\"]}\n"
            << R"({"type":"collection","id":")" << x << R"(","title":"X"})" << "\n";
    }
    FakeWriter store;  // throws on a note whose collection is not there yet
    ImportReport r = import_path(store, 3, file, batches_of(2));
    BOOST_CHECK_EQUAL(format_summary(r), "imported 5 notes (5 new, 0 updated, 0 unchanged), 2 collections, 1 errors");
    BOOST_CHECK_GE(store.batches, 3);
    BOOST_CHECK(has_error(r, "late.jsonl", "unknown collection id " + z, 6));
    BOOST_REQUIRE(store.by_title("A") && store.by_title("C") && store.by_title("D"));
    BOOST_CHECK(store.by_title("A")->collection_ids == std::vector<std::string>{x});
    BOOST_CHECK(store.by_title("C")->collection_ids == std::vector<std::string>{y});
    BOOST_CHECK(store.by_title("D")->collection_ids == std::vector<std::string>{y});
    BOOST_CHECK(store.by_title("B2")->collection_ids.empty());
}

BOOST_AUTO_TEST_CASE(real_corpus_til) {
    const std::string til = til_corpus();
    FakeWriter store;
    ImportReport r = import_path(store, 1, til);
    BOOST_CHECK_EQUAL(format_summary(r),
                      "imported 1873 notes (1873 new, 0 updated, 0 unchanged), 76 collections, 0 errors");
    BOOST_CHECK_EQUAL(store.notes.size(), 1873u);
    BOOST_CHECK_EQUAL(store.collections.size(), 76u);
    BOOST_CHECK_EQUAL(store.batches, 1);  // batches of up to 5,000 notes and 64 MiB
    std::size_t rooted = 0;
    for (const auto& [id, n] : store.notes) rooted += n.collection_ids.empty();
    BOOST_CHECK_EQUAL(rooted, 2u);  // README.md and CONTRIBUTING.md
    const NoteInput* lost = store.by_title("Accessing A Lost Commit");
    BOOST_REQUIRE(lost);
    BOOST_CHECK(lost->collection_ids == std::vector<std::string>{collection_uuid(1, "git")});
    BOOST_CHECK(lost->snippet.rfind("If you have lost track of a recent commit", 0) == 0);
    for (const auto& [id, n] : store.notes) {
        BOOST_CHECK(valid_utf8(n.snippet) && utf8_length(n.snippet) <= 200);
        BOOST_CHECK(!n.title.empty());
    }
    auto before = store.notes;
    ImportReport again = import_path(store, 1, til);
    BOOST_CHECK_EQUAL(format_summary(again),
                      "imported 1873 notes (0 new, 0 updated, 1873 unchanged), 76 collections, 0 errors");
    BOOST_CHECK(store.notes.size() == before.size());
}

BOOST_AUTO_TEST_CASE(killed_import_is_completed_by_a_rerun) {
    const std::string til = til_corpus();
    FakeWriter store;
    store.fail_on_batch = 3;
    const ImportOptions batches_of_200 = batches_of(200);
    BOOST_CHECK_THROW(import_path(store, 1, til, batches_of_200), std::runtime_error);
    BOOST_CHECK_EQUAL(store.notes.size(), 400u);  // two whole batches, nothing partial
    BOOST_CHECK_EQUAL(store.collections.size(), 76u);
    store.fail_on_batch = 0;
    ImportReport r = import_path(store, 1, til);
    BOOST_CHECK_EQUAL(r.notes_new, 1473);
    BOOST_CHECK_EQUAL(r.notes_unchanged, 400);
    BOOST_CHECK_EQUAL(store.notes.size(), 1873u);
}

namespace {

// The pipeline of BatchWriter: the next batch is prepared while one is written, the writes one
// at a time and in order, and an invalid note stops the import after the batches before it.
class PipelineWriter : public FakeWriter {
public:
    int fail_prepare_on = 0;  // > 0: that prepare_batch call throws, as an invalid note does
    bool overlapped = false;  // a prepare ran while a write waited for it
    std::vector<std::size_t> written_sizes;

    std::unique_ptr<PreparedNotes> prepare_batch(std::vector<NoteInput> batch) const override {
        std::lock_guard<std::mutex> hold(mu_);
        ++prepared_;
        cv_.notify_all();
        if (prepared_ == fail_prepare_on) throw std::invalid_argument("invalid note");
        return NoteWriter::prepare_batch(std::move(batch));
    }
    std::vector<WriteOutcome> write_prepared(long long user, const std::vector<CollectionInput>& cols,
                                             PreparedNotes& p) override {
        if (writing_.fetch_add(1) != 0) throw std::runtime_error("two writes at once");
        {
            // The first write waits until the next batch is being prepared: without a
            // pipeline that never happens and the wait runs out.
            std::unique_lock<std::mutex> hold(mu_);
            if (written_sizes.empty() && fail_prepare_on != 2)
                overlapped = cv_.wait_for(hold, std::chrono::seconds(20), [&] { return prepared_ >= 2; });
        }
        written_sizes.push_back(p.notes.size());
        auto out = write_batch(user, cols, p.notes);
        writing_.fetch_sub(1);
        return out;
    }

private:
    mutable std::mutex mu_;
    mutable std::condition_variable cv_;
    mutable int prepared_ = 0;
    std::atomic<int> writing_{0};
};

}  // namespace

BOOST_AUTO_TEST_CASE(the_next_batch_is_prepared_while_one_is_written) {
    const std::string til = til_corpus();
    const ImportOptions of_500 = batches_of(500);
    PipelineWriter store;
    BOOST_CHECK_EQUAL(import_path(store, 1, til, of_500).notes_new, 1873);
    BOOST_CHECK(store.overlapped);
    BOOST_CHECK(store.written_sizes == (std::vector<std::size_t>{500, 500, 500, 373}));
    BOOST_CHECK_EQUAL(store.notes.size(), 1873u);

    PipelineWriter failing;
    failing.fail_prepare_on = 3;
    BOOST_CHECK_THROW(import_path(failing, 1, til, of_500), std::invalid_argument);
    BOOST_CHECK(failing.written_sizes == (std::vector<std::size_t>{500, 500}));  // then it stopped
    BOOST_CHECK_EQUAL(failing.notes.size(), 1000u);
}

// A batch ends at batch_size notes or once its text reaches batch_bytes, whichever comes first.
BOOST_AUTO_TEST_CASE(batches_end_at_a_count_or_a_size) {
    const std::string til = til_corpus();
    FakeWriter by_count;
    import_path(by_count, 1, til, batches_of(500));
    BOOST_CHECK_EQUAL(by_count.batches, 4);
    FakeWriter by_size;
    ImportOptions tiny;
    tiny.batch_bytes = 1;  // every note passes it alone
    BOOST_CHECK_EQUAL(import_path(by_size, 1, til, tiny).notes_new, 1873);
    BOOST_CHECK_EQUAL(by_size.batches, 1873);
    BOOST_CHECK_EQUAL(by_size.notes.size(), 1873u);
}

BOOST_AUTO_TEST_CASE(demo_data_is_deterministic_and_varied) {
    DemoData a = build_demo(3), b = build_demo(3);
    BOOST_REQUIRE_EQUAL(a.notes.size(), 1200u);
    BOOST_CHECK_EQUAL(a.collections.size(), 10u);
    std::map<int, int> flags;
    int audio = 0, no_collection = 0, two = 0;
    std::set<std::string> titles;
    for (std::size_t i = 0; i < a.notes.size(); ++i) {
        const NoteInput& n = a.notes[i];
        BOOST_CHECK(same_note(n, b.notes[i]));
        for (int f : {kFlagOpenTasks, kFlagTasks, kFlagImages, kFlagFiles}) flags[f] += (n.flags & f) != 0;
        audio += std::any_of(n.attachments.begin(), n.attachments.end(),
                             [](const Attachment& x) { return x.kind == AttachmentKind::Audio; });
        no_collection += n.collection_ids.empty();
        two += n.collection_ids.size() == 2;
        titles.insert(n.title);
        BOOST_CHECK(n.created_us <= n.updated_us);
        BOOST_CHECK(n.created_us >= 1735689600000000LL && n.updated_us < 1767225600000000LL);
    }
    for (int f : {kFlagOpenTasks, kFlagTasks, kFlagImages, kFlagFiles})
        BOOST_CHECK_MESSAGE(flags[f] > 100, "flag " << f << " on " << flags[f] << " notes");
    BOOST_CHECK(flags[kFlagTasks] > flags[kFlagOpenTasks]);  // some notes have only closed tasks
    BOOST_CHECK(audio > 50);
    BOOST_CHECK(no_collection > 0 && two > 0);
    BOOST_CHECK(titles.size() > 200);
    BOOST_CHECK(build_demo(4).notes[0].id != a.notes[0].id);  // ids are per user

    FakeWriter store;
    generate_demo(store, 3, 450);
    BOOST_CHECK_EQUAL(store.batches, 3);
    BOOST_CHECK_EQUAL(store.notes.size(), 450u);
    BOOST_CHECK_EQUAL(store.collections.size(), 10u);
    generate_demo(store, 3, 450);  // again: nothing new (the fake would throw on a missing collection)
    BOOST_CHECK_EQUAL(store.notes.size(), 450u);
}

BOOST_AUTO_TEST_SUITE_END()
