#include "ingest/export.hpp"

#include <json/json.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>

#include "base/util.hpp"

namespace notesd {
namespace fs = std::filesystem;
namespace {

constexpr int kPage = 500;  // notes (with content) read per store call

struct Sources {
    NoteReader& reader;
    NoteTrash& trash;
    NoteEditor& notes;
};

// Every note of the user with its content, a page at a time, in list order, then the trashed
// ones (with trashed_us).
void each_note(const Sources& src, long long user_id,
               const std::function<void(const NoteItem&, std::optional<long long>)>& f) {
    std::optional<PageKey> after;
    for (;;) {
        const std::vector<NoteItem> page =
            src.reader.list_notes(user_id, {}, OrderBy::UpdatedAt, after, kPage, true);
        for (const NoteItem& n : page) f(n, std::nullopt);
        if (static_cast<int>(page.size()) < kPage) break;
        after = PageKey{page.back().updated_us, page.back().id};
    }
    for (const std::string& id : src.trash.trashed_note_ids(user_id)) {
        const std::optional<NoteRecord> r = src.notes.find_note(user_id, id);
        if (!r || !r->trashed_us) continue;  // restored or deleted meanwhile
        NoteItem n;
        n.id = r->id;
        n.title = r->title;
        n.content = r->content;
        n.created_us = r->created_us;
        n.updated_us = r->updated_us;
        n.collection_ids = r->collection_ids;
        f(n, r->trashed_us);
    }
}

std::vector<CollectionItem> all_collections(NoteReader& reader, long long user_id) {
    std::vector<CollectionItem> out;
    std::optional<PageKey> after;
    for (;;) {
        std::vector<CollectionItem> page =
            reader.list_collections(user_id, {}, OrderBy::UpdatedAt, after, kPage);
        const bool last = static_cast<int>(page.size()) < kPage;
        if (!page.empty()) after = PageKey{page.back().updated_us, page.back().id};
        for (CollectionItem& c : page) out.push_back(std::move(c));
        if (last) return out;
    }
}

Json::Value ids_value(const std::vector<std::string>& ids) {
    Json::Value a(Json::arrayValue);
    for (const std::string& id : ids) a.append(id);
    return a;
}

void write_file(std::ofstream& out, const fs::path& path) {
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(errno));
}

ExportReport export_jsonl(const Sources& src, long long user_id, const fs::path& path) {
    Json::StreamWriterBuilder b;
    b["indentation"] = "";
    b["emitUTF8"] = true;  // the store holds valid UTF-8 only (checked on every write)
    const std::unique_ptr<Json::StreamWriter> writer(b.newStreamWriter());
    const fs::path tmp = path.string() + ".tmp";
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp.string() + ": " + std::strerror(errno));
    ExportReport report;
    auto line = [&](const Json::Value& v) {
        writer->write(v, &out);
        out << '\n';
    };
    for (const CollectionItem& c : all_collections(src.reader, user_id)) {
        Json::Value v(Json::objectValue);
        v["type"] = "collection";
        v["id"] = c.id;
        v["title"] = c.title;
        v["description"] = c.description ? Json::Value(*c.description) : Json::Value();
        v["created_at"] = format_time(c.created_us);
        v["updated_at"] = format_time(c.updated_us);
        line(v);
        ++report.collections;
    }
    each_note(src, user_id, [&](const NoteItem& n, std::optional<long long> trashed_us) {
        Json::Value v(Json::objectValue);
        v["type"] = "note";
        v["id"] = n.id;
        v["title"] = n.title;  // explicit on import, so a derived title stays what it was
        v["content"] = n.content.value_or("");
        v["created_at"] = format_time(n.created_us);
        v["updated_at"] = format_time(n.updated_us);
        v["collection_ids"] = ids_value(n.collection_ids);
        if (trashed_us) v["trashed_at"] = format_time(*trashed_us);
        line(v);
        ++report.notes;
        report.trashed += trashed_us.has_value();
    });
    write_file(out, tmp);
    out.close();
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec) throw std::runtime_error("cannot write " + path.string() + ": " + ec.message());
    return report;
}

// A YAML double-quoted scalar as front_matter.cpp reads it.
std::string yaml_quoted(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            case '\r': out += "\\r"; break;
            default: out += c;
        }
    }
    return out + "\"";
}

// One file per note at the folder's root (a subfolder would add a collection on import); the
// note's collections go by title in front matter, as the importer reads them.
ExportReport export_markdown(const Sources& src, long long user_id, const fs::path& dir) {
    std::error_code ec;
    if (fs::exists(dir, ec) && !(fs::is_directory(dir, ec) && fs::is_empty(dir, ec)))
        throw std::runtime_error(dir.string() + ": exists and is not an empty folder");
    fs::create_directories(dir, ec);
    if (ec) throw std::runtime_error("cannot create " + dir.string() + ": " + ec.message());
    std::map<std::string, std::string> titles;  // collection id -> title
    ExportReport report;
    for (const CollectionItem& c : all_collections(src.reader, user_id)) titles[c.id] = c.title;
    each_note(src, user_id, [&](const NoteItem& n, std::optional<long long> trashed_us) {
        std::string text = "---\nid: " + n.id + "\ntitle: " + yaml_quoted(n.title) +
                           "\ncreated_at: " + format_time(n.created_us) +
                           "\nupdated_at: " + format_time(n.updated_us) + "\n";
        if (trashed_us) text += "trashed_at: " + format_time(*trashed_us) + "\n";
        if (!n.collection_ids.empty()) {
            text += "collections:\n";
            for (const std::string& id : n.collection_ids)
                if (auto it = titles.find(id); it != titles.end()) text += "  - " + yaml_quoted(it->second) + "\n";
        }
        text += "---\n" + n.content.value_or("");
        const fs::path file = dir / (n.id + ".md");
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out << text;
        write_file(out, file);
        ++report.notes;
        report.trashed += trashed_us.has_value();
    });
    report.collections = static_cast<long long>(titles.size());
    return report;
}

}  // namespace

ExportReport export_user(NoteReader& reader, NoteTrash& trash, NoteEditor& notes, ReadViews& views,
                         long long user_id, ExportFormat format, const std::string& path) {
    const Sources src{reader, trash, notes};
    ReadScope view(views);
    return format == ExportFormat::Jsonl ? export_jsonl(src, user_id, path)
                                         : export_markdown(src, user_id, path);
}

std::string format_export_summary(const ExportReport& r) {
    return "exported " + std::to_string(r.notes) + " notes (" + std::to_string(r.trashed) +
           " trashed), " + std::to_string(r.collections) + " collections";
}

}  // namespace notesd
