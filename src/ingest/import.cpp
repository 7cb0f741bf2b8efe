#include "ingest/import.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include <json/json.h>

#include "base/util.hpp"

namespace fs = std::filesystem;

namespace notesd {
namespace {

constexpr std::uintmax_t kMaxFileBytes = 16u << 20;  // a note larger than this is a mistake

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

std::string user_key(long long user_id) { return std::to_string(user_id); }

long long mtime_us(const fs::path& p) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return now_us();
    return st.st_mtim.tv_sec * 1000000LL + st.st_mtim.tv_nsec / 1000;
}

// The whole file, or nullopt with a reason (unreadable, too large, not UTF-8).
std::optional<std::string> read_text_file(const fs::path& p, std::string& reason) {
    std::error_code ec;
    auto size = fs::file_size(p, ec);
    if (!ec && size > kMaxFileBytes) {
        reason = "file is larger than 16 MiB";
        return std::nullopt;
    }
    std::ifstream in(p, std::ios::binary);
    std::ostringstream buf;
    if (!in || !(buf << in.rdbuf()) || in.bad()) {
        int err = errno;
        reason = std::string("cannot read file: ") + std::strerror(err ? err : EIO);
        return std::nullopt;
    }
    std::string text = buf.str();
    if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);  // byte order mark
    if (!valid_utf8(text)) {
        reason = "not valid UTF-8";
        return std::nullopt;
    }
    return text;
}

// ---- writing ----

class Progress {
public:
    /// total 0: not known in advance (a JSON Lines file is read as it is written)
    Progress(bool on, std::size_t total) : on_(on), total_(total) {}
    void advance(std::size_t n, std::size_t errors) {
        done_ += n;
        if (!on_) return;
        if (total_ > 0) std::fprintf(stderr, "\rimporting: %zu/%zu notes, %zu errors", done_, total_, errors);
        else std::fprintf(stderr, "\rimporting: %zu notes, %zu errors", done_, errors);
    }
    ~Progress() {
        if (on_ && done_ > 0) std::fputs("\r\033[K", stderr);  // the summary line follows
    }

private:
    bool on_;
    std::size_t total_;
    std::size_t done_ = 0;
};

// Notes go out in batches, one transaction each; the collections ride with the first one (one
// found later in a JSON Lines file, with the next) so that every note's collection exists as
// soon as the note does. A pipeline of two: while a thread writes one batch, this one reads
// and analyses the next (the database's part and the analysis' each took about half of an
// import's time, one after the other on one core). One
// batch is in flight at a time and each is written after the one before it has committed, so
// a failure stops the import where it would have stopped without the pipeline.
class BatchWriter {
public:
    BatchWriter(NoteWriter& writer, long long user_id, const ImportOptions& opt, ImportReport& report,
                std::vector<CollectionInput> collections, std::size_t total)
        : writer_(writer), user_id_(user_id), batch_(std::max<std::size_t>(1, opt.batch_size)),
          batch_bytes_(opt.batch_bytes), report_(report), collections_(std::move(collections)), progress_(opt.progress, total) {}

    void add(NoteInput note) {
        // prepare_batch derives the terms, about the plain text's size, kept until the write.
        bytes_ += note.content.size() + 2 * note.plain_text.size();
        notes_.push_back(std::move(note));
        if (notes_.size() >= batch_ || bytes_ >= batch_bytes_) hand_over();
    }

    /// A collection found after the writing began: it rides with the next batch, before any
    /// note that names it.
    void add_collection(CollectionInput collection) { collections_.push_back(std::move(collection)); }

    /// Writes what is left and waits for every write.
    void flush() {
        hand_over();
        finish();
    }

private:
    struct Written {
        std::vector<WriteOutcome> outcomes;
        std::size_t notes = 0, collections = 0;
    };

    // Prepares the batch here, then writes it on another thread once the one before is done.
    void hand_over() {
        if (notes_.empty() && collections_.empty()) return;
        std::unique_ptr<PreparedNotes> prepared;
        try {
            prepared = writer_.prepare_batch(std::move(notes_));
        } catch (...) {
            finish();  // the batches before an invalid note are written, as they were without
            throw;
        }
        notes_.clear();
        bytes_ = 0;
        finish();
        in_flight_ = std::async(std::launch::async,
                                [this, p = std::move(prepared), colls = std::move(collections_)] {
                                    Written w;
                                    w.outcomes = writer_.write_prepared(user_id_, colls, *p);
                                    w.notes = p->notes.size();
                                    w.collections = colls.size();
                                    return w;
                                });
        collections_.clear();
    }

    // Waits for the write in flight and counts it (its error, if any, is thrown here).
    void finish() {
        if (!in_flight_.valid()) return;
        const Written w = in_flight_.get();
        if (w.outcomes.size() < w.notes) throw std::runtime_error("store returned too few outcomes");
        // Outcomes are per note; a store that also reports collections puts them first.
        for (std::size_t i = w.outcomes.size() - w.notes; i < w.outcomes.size(); ++i) {
            if (w.outcomes[i] == WriteOutcome::Inserted) ++report_.notes_new;
            else if (w.outcomes[i] == WriteOutcome::Updated) ++report_.notes_updated;
            else ++report_.notes_unchanged;
        }
        report_.collections += static_cast<long long>(w.collections);
        progress_.advance(w.notes, report_.errors.size());
    }

    NoteWriter& writer_;
    long long user_id_;
    std::size_t batch_;
    std::size_t batch_bytes_;
    std::size_t bytes_ = 0;
    ImportReport& report_;
    std::vector<CollectionInput> collections_;
    std::vector<NoteInput> notes_;
    Progress progress_;
    std::future<Written> in_flight_;  // std::async's: destroyed, it waits for its thread
};

// Folder collections span their notes: created = earliest note, updated = latest note.
struct CollectionSpan {
    std::string id;
    long long created_us = kMaxTime;
    long long updated_us = kMinTime;
    void cover(long long c, long long u) {
        created_us = std::min(created_us, c);
        updated_us = std::max(updated_us, u);
    }
};

std::vector<CollectionInput> to_inputs(const std::map<std::string, CollectionSpan>& spans) {
    std::vector<CollectionInput> out;
    for (const auto& [title, span] : spans)
        out.push_back(CollectionInput{span.id, title, std::nullopt, span.created_us, span.updated_us});
    return out;
}

}  // namespace

// ---- public helpers ----

std::vector<Attachment> local_attachments(long long user_id, const std::string& note_id,
                                          const std::vector<LinkRef>& links) {
    std::vector<Attachment> out;
    std::set<std::string> seen;
    for (const LinkRef& l : links) {
        if (!l.local || !seen.insert(l.target).second) continue;
        out.push_back(Attachment{
            stable_uuid("notesd:attachment:" + user_key(user_id) + ":" + note_id + ":" + l.target),
            l.kind, l.target});
    }
    return out;
}

NoteInput make_note(long long user_id, std::string id, std::string content,
                    const std::optional<std::string>& title, long long created_us,
                    long long updated_us, std::vector<std::string> collection_ids) {
    DerivedNote d = derive_note(content, title);
    NoteInput n;
    n.attachments = local_attachments(user_id, id, d.links);
    n.id = std::move(id);
    n.title = std::move(d.title);
    n.snippet = std::move(d.snippet);
    n.content = std::move(content);
    n.created_us = created_us;
    n.updated_us = updated_us;
    n.flags = d.flags;
    n.collection_ids = std::move(collection_ids);
    n.plain_text = std::move(d.plain_text);
    return n;
}

std::string collection_uuid(long long user_id, std::string_view path) {
    return stable_uuid("notesd:collection:" + user_key(user_id) + ":" + std::string(path));
}

std::string format_summary(const ImportReport& r) {
    return "imported " + std::to_string(r.notes()) + " notes (" + std::to_string(r.notes_new) +
           " new, " + std::to_string(r.notes_updated) + " updated, " +
           std::to_string(r.notes_unchanged) + " unchanged), " + std::to_string(r.collections) +
           " collections, " + std::to_string(r.errors.size()) + " errors";
}

std::string format_issue(const ImportIssue& i) {
    return i.path + (i.line > 0 ? ":" + std::to_string(i.line) : std::string()) + ": " + i.reason;
}

// ---- markdown folder ----
namespace {

struct MdSource {
    fs::path path;
    std::string rel;     // path relative to the root, '/' separated
    std::string id;
    std::optional<std::string> title;
    long long created_us = 0, updated_us = 0;
    std::vector<std::string> collections;  // titles
};

bool is_markdown(const fs::path& p) {
    std::string ext = p.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), ::tolower);
    return ext == ".md" || ext == ".markdown";
}

std::vector<fs::path> list_markdown(const fs::path& root, ImportReport& report) {
    std::vector<fs::path> files;
    std::error_code ec;
    fs::recursive_directory_iterator it(root, ec), end;
    if (ec) throw std::runtime_error("cannot read folder " + root.string() + ": " + ec.message());
    for (; it != end; it.increment(ec)) {
        if (ec) {
            report.errors.push_back({root.string(), 0, "cannot list a folder: " + ec.message()});
            ec.clear();
            continue;
        }
        // Hidden folders (.git, .obsidian, .trash) hold tool state, not notes, and so do
        // macOS "._x.md" resource forks and editor ".#x.md" locks; other dot files such as
        // tldr's "..md" (the page for the "." command) are notes.
        const std::string name = it->path().filename().string();
        if (name.front() == '.' && it->is_directory(ec)) {
            it.disable_recursion_pending();
            continue;
        }
        if (name.rfind("._", 0) == 0 || name.rfind(".#", 0) == 0) continue;
        if (it->is_regular_file(ec) && is_markdown(it->path())) files.push_back(it->path());
    }
    std::sort(files.begin(), files.end());
    return files;
}

// Pass 1: metadata of one file (ids, times, collections), or an issue.
std::optional<MdSource> scan_markdown(const fs::path& file, const fs::path& root,
                                      const std::string& root_name, long long user_id,
                                      ImportReport& report) {
    MdSource src{file, fs::relative(file, root).generic_string(), "", std::nullopt, 0, 0, {}};
    std::string reason;
    std::optional<std::string> text = read_text_file(file, reason);
    FrontMatter fm;
    if (text) split_front_matter(*text, fm, reason);
    if (!reason.empty()) {
        report.errors.push_back({file.string(), 0, text ? "front matter: " + reason : reason});
        return std::nullopt;
    }
    src.id = fm.id ? *fm.id
                   : stable_uuid("notesd:note:" + user_key(user_id) + ":md:" + root_name + "/" + src.rel);
    if (fm.title && !trim(*fm.title).empty()) src.title = fm.title;
    if (fm.trashed_us) report.trashed.emplace_back(src.id, *fm.trashed_us);
    long long mtime = mtime_us(file);
    src.created_us = fm.created_us ? *fm.created_us : std::min(mtime, fm.updated_us.value_or(mtime));
    src.updated_us = fm.updated_us ? *fm.updated_us : std::max(mtime, src.created_us);
    std::string folder = fs::path(src.rel).parent_path().generic_string();
    if (!folder.empty()) src.collections.push_back(folder);
    for (const std::string& c : fm.collections)
        if (std::find(src.collections.begin(), src.collections.end(), c) == src.collections.end())
            src.collections.push_back(c);
    return src;
}

ImportReport import_folder(NoteWriter& store, long long user_id, const fs::path& root,
                           const ImportOptions& opt) {
    ImportReport report;
    fs::path canonical = fs::weakly_canonical(root);
    if (canonical.filename().empty()) canonical = canonical.parent_path();  // "notes/"
    std::string root_name = canonical.filename().string();
    std::vector<MdSource> sources;
    std::map<std::string, std::string> owner_of_id;
    std::map<std::string, CollectionSpan> spans;
    for (const fs::path& file : list_markdown(root, report)) {
        std::optional<MdSource> src = scan_markdown(file, root, root_name, user_id, report);
        if (!src) continue;
        auto [at, fresh] = owner_of_id.emplace(src->id, src->rel);
        if (!fresh) {
            report.errors.push_back({file.string(), 0, "duplicate note id (also used by " + at->second + ")"});
            continue;
        }
        for (const std::string& c : src->collections) {
            CollectionSpan& span = spans[c];
            span.id = collection_uuid(user_id, c);
            span.cover(src->created_us, src->updated_us);
        }
        sources.push_back(std::move(*src));
    }
    BatchWriter writer(store, user_id, opt, report, to_inputs(spans), sources.size());
    for (MdSource& src : sources) {
        // Pass 2: the text again, so that memory holds two batches (the one being written
        // and the next) rather than the whole tree.
        std::string reason;
        FrontMatter fm;
        std::optional<std::string> text = read_text_file(src.path, reason);
        std::string body = text ? split_front_matter(*text, fm, reason) : std::string();
        if (!reason.empty()) {
            report.errors.push_back({src.path.string(), 0, "changed during import: " + reason});
            continue;
        }
        std::vector<std::string> ids;
        for (const std::string& c : src.collections) ids.push_back(spans[c].id);
        writer.add(make_note(user_id, src.id, std::move(body), src.title, src.created_us,
                             src.updated_us, std::move(ids)));
    }
    writer.flush();
    return report;
}

// ---- JSON Lines of Mem-shaped objects ----

struct JsonlNote {
    long line = 0;
    std::string id;
    std::optional<std::string> title;
    std::string content;
    std::optional<long long> created_us, updated_us, trashed_us;
    std::vector<std::string> collection_ids;
};

// Mem ids are UUIDs; other strings map to stable UUIDs so that references still match.
std::string map_id(long long user_id, const std::string& raw) {
    if (auto u = parse_uuid(raw)) return *u;
    return stable_uuid("notesd:jsonl:" + user_key(user_id) + ":" + raw);
}

// An absent or null field is nullopt; any other non-string is an error.
bool opt_string(const Json::Value& o, const char* key, std::optional<std::string>& out,
                std::string& err) {
    const Json::Value& v = o[key];
    if (v.isNull()) return true;
    if (!v.isString()) { err = std::string(key) + " must be a string"; return false; }
    out = v.asString();
    return true;
}

bool opt_time(const Json::Value& o, const char* key, std::optional<long long>& out, std::string& err) {
    std::optional<std::string> text;
    if (!opt_string(o, key, text, err)) return false;
    if (text && !(out = parse_import_time(*text))) err = std::string(key) + " is not a date-time";
    return err.empty();
}

// "type" decides when present; otherwise an object with "content" is a note, one without is
// a collection (Mem's two list item shapes differ exactly there).
bool is_collection(const Json::Value& o, std::string& err) {
    const Json::Value& type = o["type"];
    if (type.isNull()) return !o.isMember("content");
    if (type.isString() && type.asString() == "collection") return true;
    if (!(type.isString() && type.asString() == "note")) err = "type must be \"note\" or \"collection\"";
    return false;
}

bool parse_collection(const Json::Value& o, long long user_id, long long fallback_us,
                      CollectionInput& c, std::string& err) {
    std::optional<std::string> id, title;
    std::optional<long long> created, updated;
    if (!opt_string(o, "id", id, err) || !opt_string(o, "title", title, err) ||
        !opt_string(o, "description", c.description, err) ||
        !opt_time(o, "created_at", created, err) || !opt_time(o, "updated_at", updated, err))
        return false;
    if (!title) { err = "a collection needs a title"; return false; }
    c.title = *title;
    c.id = id ? map_id(user_id, *id) : collection_uuid(user_id, *title);
    c.created_us = created.value_or(updated.value_or(fallback_us));
    c.updated_us = updated.value_or(c.created_us);
    return true;
}

bool parse_note(const Json::Value& o, long long user_id, const std::string& line_key,
                JsonlNote& n, std::string& err) {
    std::optional<std::string> id, content;
    if (!opt_string(o, "id", id, err) || !opt_string(o, "title", n.title, err) ||
        !opt_string(o, "content", content, err) || !opt_time(o, "created_at", n.created_us, err) ||
        !opt_time(o, "updated_at", n.updated_us, err) || !opt_time(o, "trashed_at", n.trashed_us, err))
        return false;
    if (!content) { err = "a note needs content"; return false; }
    const Json::Value& cols = o["collection_ids"];
    if (!cols.isNull() && !cols.isArray()) { err = "collection_ids must be an array"; return false; }
    for (const Json::Value& c : cols) {
        if (!c.isString()) { err = "collection_ids must hold strings"; return false; }
        n.collection_ids.push_back(map_id(user_id, c.asString()));
    }
    if (n.title && trim(*n.title).empty()) n.title.reset();
    n.content = std::move(*content);
    n.id = id ? map_id(user_id, *id) : stable_uuid(line_key);
    return true;
}

std::string json_error(const std::string& errs) {
    // jsoncpp: "* Line 1, Column 7\n  Syntax error: value, object or array expected.\n"
    std::size_t nl = errs.find('\n');
    std::string detail(trim(nl == std::string::npos ? errs : errs.substr(nl + 1)));
    detail = detail.substr(0, detail.find('\n'));
    return "invalid JSON" + (detail.empty() ? std::string() : " (" + detail + ")");
}

ImportReport import_jsonl(NoteWriter& store, long long user_id, const fs::path& file,
                          const ImportOptions& opt) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + file.string() + ": " + std::strerror(errno));
    ImportReport report;
    const long long fallback_us = mtime_us(file);
    Json::CharReaderBuilder builder;
    Json::CharReaderBuilder::strictMode(&builder.settings_);
    std::unique_ptr<Json::CharReader> reader(builder.newCharReader());
    std::map<std::string, long> seen;  // id -> line, notes and collections apart
    auto known_collection = [&](const std::string& id) { return seen.count("c:" + id) > 0; };
    // The file is written as it is read, so that parsing overlaps the batches' analysis and
    // writes (read whole first, the parse was a single-core sixth of an import). A note that
    // names a collection further down the file waits for the end, when every collection of
    // the file is known; files notesctl exports put the collections first.
    BatchWriter writer(store, user_id, opt, report, {}, 0);
    std::vector<JsonlNote> waiting;
    auto write_note = [&](JsonlNote& n) {
        std::vector<std::string> ids;
        for (const std::string& id : n.collection_ids) {
            if (known_collection(id)) {
                if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
            } else {
                report.errors.push_back({file.string(), n.line,
                                         "unknown collection id " + id + " (not in this file); link dropped"});
            }
        }
        long long created = n.created_us.value_or(n.updated_us.value_or(fallback_us));
        if (n.trashed_us) report.trashed.emplace_back(n.id, *n.trashed_us);
        writer.add(make_note(user_id, n.id, std::move(n.content), n.title, created,
                             n.updated_us.value_or(created), std::move(ids)));
    };
    std::string text;
    for (long line = 1; std::getline(in, text); ++line) {
        if (line == 1 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);
        if (trim(text).empty()) continue;
        auto issue = [&](const std::string& why) { report.errors.push_back({file.string(), line, why}); };
        Json::Value obj;
        std::string err;
        if (!valid_utf8(text)) { issue("not valid UTF-8"); continue; }
        if (!reader->parse(text.data(), text.data() + text.size(), &obj, &err)) { issue(json_error(err)); continue; }
        if (!obj.isObject()) { issue("not a JSON object"); continue; }
        bool collection = is_collection(obj, err);
        CollectionInput c;
        JsonlNote n;
        n.line = line;
        std::string line_key = "notesd:jsonl-line:" + user_key(user_id) + ":" +
                               file.filename().string() + ":" + std::to_string(line);
        bool ok = err.empty() && (collection ? parse_collection(obj, user_id, fallback_us, c, err)
                                             : parse_note(obj, user_id, line_key, n, err));
        if (!ok) { issue(err); continue; }
        auto [at, fresh] = seen.emplace((collection ? "c:" : "n:") + (collection ? c.id : n.id), line);
        if (!fresh) { issue("duplicate id (first on line " + std::to_string(at->second) + ")"); continue; }
        if (collection) writer.add_collection(std::move(c));
        else if (std::all_of(n.collection_ids.begin(), n.collection_ids.end(), known_collection)) write_note(n);
        else waiting.push_back(std::move(n));
    }
    if (in.bad()) throw std::runtime_error("cannot read " + file.string() + ": read error");
    for (JsonlNote& n : waiting) write_note(n);
    writer.flush();
    std::stable_sort(report.errors.begin(), report.errors.end(),
                     [](const ImportIssue& a, const ImportIssue& b) { return a.line < b.line; });
    return report;
}

}  // namespace

ImportReport import_path(NoteWriter& store, long long user_id, const std::string& path,
                         ImportOptions options) {
    std::error_code ec;
    fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st)) throw std::runtime_error(path + ": no such file or folder");
    std::string ext = fs::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), ::tolower);
    ImportReport report;
    if (fs::is_directory(st))
        report = import_folder(store, user_id, path, options);
    else if (fs::is_regular_file(st) && (ext == ".jsonl" || ext == ".ndjson"))
        report = import_jsonl(store, user_id, path, options);
    else
        throw std::runtime_error(path + ": expected a folder of markdown files or a .jsonl file");
    // Written live first (the batches hold the note's links and text), then trashed as the
    // export found them; a note already in the trash stays as it is.
    if (options.trash)
        for (const auto& [id, trashed_us] : report.trashed) options.trash->trash_note(user_id, id, trashed_us);
    if (options.compact) store.compact_index(user_id);
    return report;
}

}  // namespace notesd
