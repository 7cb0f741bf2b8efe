// notesctl: the admin tool (schema, users, tokens, import, demo data). Exit status: 0 ok,
// 1 an error was reported, 2 usage.
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/config.hpp"
#include "base/huge_pages.hpp"
#include "server/status_server.hpp"
#include "tools/status_view.hpp"
#include "ingest/demo.hpp"
#include "ingest/export.hpp"
#include "ingest/import.hpp"
#include "store/store.hpp"
#include "base/util.hpp"

namespace notesd {
namespace {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

const char* const kUsage =
    "usage: notesctl [--db CONN] [--config PATH] COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  migrate                        create or upgrade the database schema\n"
    "  user add NAME                  add a user\n"
    "  user list                      list users with their note and collection counts\n"
    "  token create USER [--label L] [--read-only]\n"
    "                                 create an API token (read-write unless --read-only); it is\n"
    "                                 printed once, alone on the last line of standard output\n"
    "  token list USER                list a user's tokens (prefixes and scopes only)\n"
    "  token revoke ID                revoke a token\n"
    "  import USER PATH [--batch N] [--no-compact]\n"
    "                                 import a folder of .md files or a .jsonl file (N notes\n"
    "                                 per transaction, default 5000; a transaction of 64 notes\n"
    "                                 or more is one search index segment); then compact the\n"
    "                                 user's search index as `pack` does, unless --no-compact\n"
    "  export USER [--format jsonl|markdown] PATH\n"
    "                                 write the user's collections and notes to a .jsonl file\n"
    "                                 (default) or a new folder of .md files; importing it\n"
    "                                 into an empty database and exporting again gives the\n"
    "                                 same bytes\n"
    "  demo USER [--notes N]          generate demo notes (default 1200)\n"
    "  note delete USER NOTE_ID       delete one note\n"
    "  check USER                     compare the user's maintained counts with a recount and\n"
    "                                 the search index with a rebuild from the stored text;\n"
    "                                 prints each difference, exit status 1 when there is one\n"
    "  pack USER                      compact the user's search index for fast reads: fold\n"
    "                                 postings rows (API writes) into a segment, merge segments\n"
    "                                 down to a few, pack what rows remain (SQLite); import,\n"
    "                                 demo and note delete do it after writing\n"
    "  status [--socket ADDR] [--format text|json|prometheus]\n"
    "                                 the running pool's status page, from the master's status\n"
    "                                 socket (default: status_listen of the config file)\n"
    "\n"
    "USER is a user name or numeric id. The database is --db, else $NOTESD_DB, else `db` of the\n"
    "config file (--config, default " NOTESD_SYSCONFDIR "/notesd.conf).\n"
    "Exit status: 0 ok, 1 error, 2 usage.\n";

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Args {
    std::string db;
    std::string config;
    std::map<std::string, std::string> options;  // command options: --label, --notes, ...
    std::vector<std::string> words;              // command, subcommand and operands
    bool help = false;
};

Args parse_args(int argc, char** argv) {
    Args a;
    bool operands_only = false;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (operands_only || arg.size() < 2 || arg[0] != '-') { a.words.push_back(arg); continue; }
        if (arg == "--") { operands_only = true; continue; }
        if (arg == "-h" || arg == "--help") { a.help = true; continue; }
        if (arg == "--read-only" || arg == "--no-compact") {  // switches without a value
            if (!a.options.emplace(arg, "").second) throw UsageError(arg + " given twice");
            continue;
        }
        std::string name = arg, value;
        std::size_t eq = arg.find('=');
        bool inline_value = eq != std::string::npos;
        if (inline_value) name = arg.substr(0, eq), value = arg.substr(eq + 1);
        if (name != "--db" && name != "--config" && name != "--label" && name != "--notes" &&
            name != "--batch" && name != "--socket" && name != "--format")
            throw UsageError("unknown option " + name);
        if (!inline_value) {
            if (i + 1 >= argc) throw UsageError(name + " needs a value");
            value = argv[++i];
        }
        if (name == "--db") a.db = value;
        else if (name == "--config") a.config = value;
        else if (!a.options.emplace(name, value).second) throw UsageError(name + " given twice");
    }
    return a;
}

// --db, else $NOTESD_DB, else the config file's db (an explicit --config wins over the env).
std::string resolve_db(const Args& a) {
    if (!a.db.empty()) return a.db;
    if (!a.config.empty()) return load_config(a.config).db;
    if (const char* env = std::getenv("NOTESD_DB"); env && *env) return env;
    const std::string def = NOTESD_SYSCONFDIR "/notesd.conf";
    if (::access(def.c_str(), R_OK) == 0) return load_config(def).db;
    return Config().db;
}

std::string pad(std::string s, std::size_t width) {
    s.append(s.size() < width ? width - s.size() : 1, ' ');  // columns never touch
    return s;
}

class Tool {
public:
    explicit Tool(Args args) : a_(std::move(args)) {}

    /// Checks the command line before the database is opened, so usage errors exit with 2.
    void check() {
        const std::string cmd = word(0) + (sub_commands() ? " " + word(1) : "");
        static const std::map<std::string, std::pair<std::size_t, int (Tool::*)()>> kCommands = {
            {"migrate", {1, &Tool::migrate}},         {"user add", {3, &Tool::user_add}},
            {"user list", {2, &Tool::user_list}},     {"token create", {3, &Tool::token_create}},
            {"token list", {3, &Tool::token_list}},   {"token revoke", {3, &Tool::token_revoke}},
            {"import", {3, &Tool::import}},           {"demo", {2, &Tool::demo}},
            {"export", {3, &Tool::export_data}},
            {"note delete", {4, &Tool::note_delete}}, {"pack", {2, &Tool::pack}},
            {"check", {2, &Tool::check_user}}};
        auto it = kCommands.find(cmd);
        if (it == kCommands.end()) throw UsageError("unknown command '" + cmd + "'");
        if (a_.words.size() != it->second.first)
            throw UsageError("'" + cmd + "' takes " +
                             std::to_string(it->second.first - 1 - (sub_commands() ? 1 : 0)) +
                             " argument(s)");
        for (const auto& [name, value] : a_.options)
            if (!((name == "--label" || name == "--read-only") && cmd == "token create") &&
                !(name == "--notes" && cmd == "demo") &&
                !((name == "--batch" || name == "--no-compact") && cmd == "import") &&
                !(name == "--format" && cmd == "export"))
                throw UsageError(name + " does not apply to '" + cmd + "'");
        if (auto n = a_.options.find("--notes"); n != a_.options.end()) {
            const std::string& v = n->second;
            if (v.empty() || v.size() > 7 || v.find_first_not_of("0123456789") != std::string::npos ||
                (demo_notes_ = std::stoi(v)) < 1 || demo_notes_ > 1000000)
                throw UsageError("--notes must be an integer from 1 to 1000000");
        }
        if (auto n = a_.options.find("--batch"); n != a_.options.end()) {
            const std::string& v = n->second;
            if (v.empty() || v.size() > 6 || v.find_first_not_of("0123456789") != std::string::npos ||
                (batch_ = std::stoi(v)) < 1 || batch_ > 100000)
                throw UsageError("--batch must be an integer from 1 to 100000");
        }
        if (auto f = a_.options.find("--format"); f != a_.options.end()) {
            if (f->second == "markdown") format_ = ExportFormat::Markdown;
            else if (f->second != "jsonl") throw UsageError("--format must be jsonl or markdown");
        }
        cmd_ = cmd;
        handler_ = it->second.second;
    }

    int run(Store& store) {
        admin_ = &store;
        writer_ = &store;
        reader_ = &store;
        trash_ = &store;
        editor_ = &store;
        views_ = &store;
        if (cmd_ != "migrate") require_schema();
        return (this->*handler_)();
    }

private:
    bool sub_commands() const { return word(0) == "user" || word(0) == "token" || word(0) == "note"; }
    std::string word(std::size_t i) const { return i < a_.words.size() ? a_.words[i] : ""; }

    void require_schema() {
        int version = 0;
        try { version = admin_->schema_version(); } catch (const std::exception&) { version = 0; }
        if (version == 0)
            throw std::runtime_error("the database has no schema yet; run 'notesctl migrate' first");
    }

    UserInfo user(const std::string& name_or_id) {
        std::optional<UserInfo> u = admin_->find_user(name_or_id);
        if (!u) throw std::runtime_error("no such user: " + name_or_id);
        return *u;
    }

    int migrate() {
        admin_->migrate();
        std::cout << "schema version " << admin_->schema_version() << "\n";
        return 0;
    }

    int user_add() {
        const std::string& name = a_.words[2];
        if (name.find_first_not_of("0123456789") == std::string::npos)
            throw UsageError("a user name must not be all digits (USER arguments also accept ids)");
        for (char c : name)
            if (static_cast<unsigned char>(c) < 0x20 || c == ' ' || c == 0x7f)
                throw UsageError("a user name must not contain spaces or control characters");
        if (admin_->find_user(name)) throw std::runtime_error("user '" + name + "' already exists");
        long long id = admin_->add_user(name, now_us());
        std::cerr << "added user " << name << " (id " << id << ")\n";
        std::cout << id << "\n";
        return 0;
    }

    int user_list() {
        std::cout << pad("ID", 8) << pad("NAME", 24) << pad("CREATED", 28) << pad("NOTES", 9) << "COLLECTIONS\n";
        for (const UserInfo& u : admin_->list_users())
            std::cout << pad(std::to_string(u.id), 8) << pad(u.name, 24) << pad(format_time(u.created_us), 28)
                      << pad(std::to_string(u.note_count), 9) << u.collection_count << "\n";
        return 0;
    }

    int token_create() {
        UserInfo u = user(a_.words[2]);
        auto label_it = a_.options.find("--label");
        std::string label = label_it == a_.options.end() ? "" : label_it->second;
        // 256 random bits; only the SHA-256 and a recognisable prefix are stored.
        std::string token = "notesd_" + base64url_encode(random_bytes(32));
        std::string prefix = token.substr(0, 12);
        const bool read_only = a_.options.count("--read-only") > 0;
        long long id = admin_->add_token(u.id, sha256_hex(token), prefix, label, now_us(),
                                         read_only ? TokenScope::ReadOnly : TokenScope::ReadWrite);
        std::cerr << "created " << (read_only ? "read-only" : "read-write") << " token " << id
                  << " for user " << u.name << " (id " << u.id << ")"
                  << (label.empty() ? "" : ", label '" + label + "'") << ", prefix " << prefix
                  << "\nthe token is shown only now; store it safely:\n";
        std::cerr.flush();
        std::cout << token << std::endl;
        return 0;
    }

    int token_list() {
        UserInfo u = user(a_.words[2]);
        std::cout << pad("ID", 8) << pad("PREFIX", 16) << pad("SCOPE", 12) << pad("CREATED", 28)
                  << pad("REVOKED", 28) << "LABEL\n";
        for (const TokenInfo& t : admin_->list_tokens(u.id))
            std::cout << pad(std::to_string(t.id), 8) << pad(t.prefix + "...", 16)
                      << pad(t.scope == TokenScope::ReadOnly ? "read-only" : "read-write", 12)
                      << pad(format_time(t.created_us), 28)
                      << pad(t.revoked_us ? format_time(*t.revoked_us) : "-", 28) << t.label << "\n";
        return 0;
    }

    int token_revoke() {
        const std::string& id = a_.words[2];
        if (id.empty() || id.size() > 18 || id.find_first_not_of("0123456789") != std::string::npos)
            throw UsageError("token revoke takes a numeric token id (see 'token list USER')");
        if (!admin_->revoke_token(std::stoll(id), now_us()))
            throw std::runtime_error("no such token: " + id);
        std::cerr << "revoked token " << id << "\n";
        return 0;
    }

    int import() {
        UserInfo u = user(a_.words[1]);
        ImportOptions opt;
        opt.progress = ::isatty(STDERR_FILENO) == 1;
        opt.batch_size = static_cast<std::size_t>(batch_);
        opt.trash = trash_;
        opt.compact = a_.options.count("--no-compact") == 0;
        ImportReport r = import_path(*writer_, u.id, a_.words[2], opt);
        for (const ImportIssue& issue : r.errors) std::cerr << "notesctl: " << format_issue(issue) << "\n";
        std::cout << format_summary(r) << "\n";
        return r.errors.empty() ? 0 : kExitError;
    }

    int export_data() {
        UserInfo u = user(a_.words[1]);
        const ExportReport r = export_user(*reader_, *trash_, *editor_, *views_, u.id, format_,
                                             a_.words[2]);
        std::cout << format_export_summary(r) << "\n";
        return 0;
    }

    int demo() {
        UserInfo u = user(a_.words[1]);
        generate_demo(*writer_, u.id, demo_notes_);
        std::cout << "generated " << demo_notes_ << " demo notes for user " << u.name << "\n";
        return 0;
    }

    int pack() {
        UserInfo u = user(a_.words[1]);
        const IndexCompaction c = writer_->compact_index(u.id);
        std::cout << "folded " << c.folded_notes << " notes into the search index's segments, merged "
                  << c.merged_segments << " segments (" << c.segments << " left) for user " << u.name
                  << "\n";
        std::cout << "longest write transaction of its " << c.steps << " steps: "
                  << c.longest_write_us / 1000 << "." << c.longest_write_us / 100 % 10 << " ms ("
                  << c.longest_write_op << ")\n";
        std::cout << "packed " << writer_->pack_postings(u.id) << " postings blocks for user " << u.name
                  << "\n";
        return 0;
    }

    int check_user() {
        UserInfo u = user(a_.words[1]);
        const std::vector<std::string> problems = admin_->check_user(u.id);
        for (const std::string& p : problems) std::cout << p << "\n";
        std::cerr << "user " << u.name << ": "
                  << (problems.empty() ? "counts and search index consistent"
                                       : std::to_string(problems.size()) + " difference(s)")
                  << "\n";
        return problems.empty() ? 0 : kExitError;
    }

    int note_delete() {
        UserInfo u = user(a_.words[2]);
        std::optional<std::string> id = parse_uuid(a_.words[3]);
        if (!id) throw UsageError("NOTE_ID must be a UUID");
        if (!writer_->delete_note(u.id, *id)) throw std::runtime_error("user " + u.name + " has no note " + *id);
        writer_->compact_index(u.id);
        writer_->pack_postings(u.id);
        std::cerr << "deleted note " << *id << "\n";
        return 0;
    }

    Args a_;
    std::string cmd_;
    int demo_notes_ = 1200;
    int batch_ = static_cast<int>(ImportOptions{}.batch_size);  // notes per transaction at most
    int (Tool::*handler_)() = nullptr;
    Admin* admin_ = nullptr;
    NoteWriter* writer_ = nullptr;
    NoteReader* reader_ = nullptr;
    NoteTrash* trash_ = nullptr;
    NoteEditor* editor_ = nullptr;
    ReadViews* views_ = nullptr;
    ExportFormat format_ = ExportFormat::Jsonl;
};

// Exception text from the database layer may carry SQL and bound values: keep the message only.
std::string safe_message(const std::exception& e) {
    std::string m = e.what();
    std::size_t cut = m.find(" while executing");
    return cut == std::string::npos ? m : m.substr(0, cut);
}

// `status` reads the master's status socket, not the database.
int status_command(const Args& a) {
    if (a.words.size() != 1) throw UsageError("'status' takes no argument");
    std::string format = "text", address;
    for (const auto& [name, value] : a.options) {
        if (name == "--format") format = value;
        else if (name == "--socket") address = value;
        else throw UsageError(name + " does not apply to 'status'");
    }
    if (format != "text" && format != "json" && format != "prometheus")
        throw UsageError("--format must be text, json or prometheus");
    if (address.empty()) {
        const std::string def = NOTESD_SYSCONFDIR "/notesd.conf";
        const Config c = !a.config.empty() ? load_config(a.config)
                         : ::access(def.c_str(), R_OK) == 0 ? load_config(def) : Config();
        address = status_listen_address(c);
        if (address.empty())
            throw std::runtime_error("the configuration has no status socket (status_listen); use --socket");
    }
    return print_status(address, format);
}

// A bulk command allocates and frees a batch's buffers (text, tokens, segment blocks) every few
// hundred milliseconds. glibc gives large freed chunks back to the kernel (mmap threshold,
// heap trimming), so each batch faulted its pages in again (doc/benchmarks.md, "The import's
// allocations kept"). A short-lived tool keeps them instead, including the arrays above the
// largest mmap threshold (32 MB: a batch's SegmentBuilder entries and positions), which only
// M_MMAP_MAX 0 keeps in the heap (doc/benchmarks.md, "notesctl's page cache and heap").
// (notesd's workers set the same thresholds when built without tcmalloc: main_notesd.cpp.)
void keep_freed_memory() {
#if defined(M_TRIM_THRESHOLD)
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

// The commands whose working set grows with the user's notes (about 0.6 GB for an import of
// 100,000): worth re-executing for a heap in huge pages. The others finish in milliseconds,
// which a second exec (about 9 ms here) would double.
bool builds_large_heap(const std::string& command) {
    return command == "import" || command == "export" || command == "demo" || command == "pack" ||
           command == "check" || command == "migrate";
}

int run(int argc, char** argv) {
    keep_freed_memory();
    Args args;
    try {
        args = parse_args(argc, argv);
        if (args.help) { std::cout << kUsage; return 0; }
        if (args.words.empty()) throw UsageError("missing command");
        if (args.words[0] == "status") return status_command(args);
        if (builds_large_heap(args.words[0])) reexec_with_huge_page_heap(argv);
        Tool tool(args);
        tool.check();
        std::unique_ptr<Store> store = open_store_for_bulk(resolve_db(args));
        return tool.run(*store);
    } catch (const UsageError& e) {
        std::cerr << "notesctl: " << e.what() << "\n(see 'notesctl --help')\n";
        return kExitUsage;
    } catch (const std::exception& e) {
        std::cerr << "notesctl: " << safe_message(e) << "\n";
        return kExitError;
    }
}

}  // namespace
}  // namespace notesd

int main(int argc, char** argv) { return notesd::run(argc, argv); }
