#include "ingest/demo.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>

#include "ingest/import.hpp"
#include "ingest/markdown.hpp"
#include "base/util.hpp"

namespace notesd {
namespace {

// Times are fixed (not "now") so that the data is the same on every run: 2025-01-01..2026-01-01.
constexpr long long kStartUs = 1735689600LL * 1000000;
constexpr long long kYearUs = 365LL * 86400 * 1000000;
constexpr long long kDayUs = 86400LL * 1000000;

// splitmix64: tiny, portable and fully specified (std distributions differ between libraries).
class Rng {
public:
    explicit Rng(std::uint64_t seed) : s_(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }
    bool chance(int percent) { return below(100) < percent; }
    template <std::size_t N>
    const char* pick(const char* const (&list)[N]) { return list[below(static_cast<int>(N))]; }

private:
    std::uint64_t s_;
};

struct Topic {
    const char* title;
    const char* description;  // nullptr: a collection without description
    const char* const* subjects;  // title subjects, 8 each
    const char* const* nouns;     // body nouns, 8 each
    int task_pct, image_pct, file_pct, audio_pct;
};

#define LIST8(name, ...) const char* const name[8] = {__VA_ARGS__};
LIST8(kWorkS, "Project Falcon", "the billing migration", "Q3 planning", "the onboarding flow",
      "the API rollout", "vendor evaluation", "the design review", "release 4.2")
LIST8(kWorkN, "milestone", "deadline", "dependency", "budget", "rollout plan", "risk register",
      "estimate", "handover")
LIST8(kMeetS, "Weekly standup", "Design sync", "1:1 with Maria", "Retro", "Customer call with Acme",
      "Architecture review", "Hiring panel", "Quarterly kickoff")
LIST8(kMeetN, "action item", "decision", "follow-up", "agenda", "open question", "blocker",
      "summary", "next step")
LIST8(kFoodS, "Lemon garlic pasta", "Weeknight dal", "Sourdough starter", "Roasted squash soup",
      "Miso salmon", "Banana bread", "Chickpea curry", "Summer tomato salad")
LIST8(kFoodN, "oven", "dough", "spice mix", "marinade", "sauce", "shopping list", "leftovers",
      "portion")
LIST8(kTravelS, "Lisbon", "Kyoto", "the Dolomites", "Edinburgh", "Oaxaca", "Copenhagen",
      "Vancouver Island", "Marrakesh")
LIST8(kTravelN, "itinerary", "booking", "train ticket", "day trip", "packing list", "museum",
      "ferry", "hostel")
LIST8(kReadS, "Thinking in Systems", "The Pragmatic Programmer", "A Pattern Language",
      "Deep Work", "The Overstory", "Designing Data-Intensive Applications", "Middlemarch",
      "The Soul of a New Machine")
LIST8(kReadN, "chapter", "argument", "quote", "character", "example", "footnote", "theme",
      "reading group")
LIST8(kHealthS, "Running plan", "Knee physio", "Sleep log", "Strength routine", "Cycling week",
      "Yoga basics", "Meal prep", "Annual check-up")
LIST8(kHealthN, "interval", "stretch", "rest day", "heart rate", "appointment", "routine",
      "warm-up", "progress")
LIST8(kMoneyS, "Monthly budget", "Tax return", "Insurance renewal", "Savings goals",
      "Receipts for expenses", "Mortgage options", "Subscriptions audit", "Pension review")
LIST8(kMoneyN, "invoice", "statement", "receipt", "transfer", "deduction", "quote", "payment",
      "spreadsheet")
LIST8(kHomeS, "Boiler service", "Garden plan", "Kitchen shelves", "Bike repair", "Window seals",
      "Moving checklist", "Paint colours", "Smoke alarms")
LIST8(kHomeN, "manual", "warranty", "toolbox", "contractor", "measurement", "spare part",
      "schedule", "checklist")
LIST8(kLearnS, "Rust ownership", "SQL window functions", "Git rebase", "Kubernetes probes",
      "Spanish subjunctive", "Music theory: modes", "Statistics refresher", "Go channels")
LIST8(kLearnN, "exercise", "concept", "example", "lecture", "cheat sheet", "practice session",
      "mistake", "summary")
LIST8(kIdeaS, "App for shared shopping lists", "Neighbourhood tool library", "Podcast concept",
      "Board game prototype", "Blog post series", "Photo book", "Side project: weather bot",
      "Workshop format")
LIST8(kIdeaN, "sketch", "prototype", "audience", "name", "first step", "question", "constraint",
      "inspiration")
#undef LIST8

const Topic kTopics[] = {
    {"Work Projects", "Plans, milestones and status of ongoing work", kWorkS, kWorkN, 45, 10, 25, 5},
    {"Meeting Notes", "Notes and recordings from meetings", kMeetS, kMeetN, 55, 5, 10, 35},
    {"Recipes", "Things worth cooking again", kFoodS, kFoodN, 30, 45, 5, 5},
    {"Travel", "Trips, bookings and photos", kTravelS, kTravelN, 35, 50, 30, 10},
    {"Reading", "Books and articles, with quotes", kReadS, kReadN, 10, 10, 20, 10},
    {"Health", "Training, appointments and habits", kHealthS, kHealthN, 40, 10, 15, 10},
    {"Finance", "Budgets, receipts and paperwork", kMoneyS, kMoneyN, 35, 5, 55, 0},
    {"Home", "Repairs, manuals and projects around the house", kHomeS, kHomeN, 60, 30, 30, 5},
    {"Learning", nullptr, kLearnS, kLearnN, 25, 10, 15, 15},
    {"Ideas", nullptr, kIdeaS, kIdeaN, 20, 15, 5, 25},
};

const char* const kTitleForms[] = {"%s", "Notes on %s", "%s: follow-up", "%s (draft)",
                                   "Thoughts about %s", "%s, second pass"};
const char* const kOpeners[] = {"Quick notes so I do not forget.", "Summary of where things stand.",
                                "Writing this down after today.", "A few points worth keeping."};
const char* const kVerbs[] = {"check", "update", "compare", "write down", "review", "sort out",
                              "ask about", "plan", "move", "share"};
const char* const kAdjectives[] = {"the new", "the old", "our", "the second", "the shared",
                                   "the weekly", "a better", "the final"};
const char* const kWhen[] = {"before Friday", "next week", "tomorrow morning", "after lunch",
                             "by the end of the month", "when there is time", "this weekend",
                             "first thing on Monday"};
const char* const kComments[] = {
    "It went better than expected", "This still needs a second look", "Nobody objected",
    "The numbers look reasonable", "I am not convinced yet", "Worth trying again",
    "That was the main surprise", "Keep it simple this time", "Ask for feedback early",
    "It took longer than planned"};
const char* const kStates[] = {"on track", "still open", "done", "waiting on someone else",
                               "more work than it looked", "finally sorted", "blocked for now",
                               "good enough"};
const char* const kFileNames[] = {"report", "summary", "invoice", "manual", "tickets",
                                  "agenda", "notes", "plan"};
const char* const kFileExts[] = {"pdf", "pdf", "pdf", "docx", "xlsx", "pptx", "csv", "zip"};
const char* const kImageExts[] = {"jpg", "png", "png", "webp", "gif", "heic"};
const char* const kAudioExts[] = {"m4a", "m4a", "mp3", "ogg", "wav"};

std::string fill(const char* form, const std::string& value) {
    std::string out(form);
    std::size_t at = out.find("%s");
    if (at != std::string::npos) out.replace(at, 2, value);
    if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
    return out;
}

std::string slug(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(c));
        else if (!out.empty() && out.back() != '-') out += '-';
    }
    while (!out.empty() && out.back() == '-') out.pop_back();
    return out;
}

std::string sentence(Rng& rng, const Topic& t) {
    std::string s;
    int a = rng.below(8), b = (a + 1 + rng.below(7)) % 8;  // two different nouns
    switch (rng.below(4)) {
    case 0: s = std::string("Need to ") + rng.pick(kVerbs) + " " + rng.pick(kAdjectives) + " " +
                t.nouns[a] + " " + rng.pick(kWhen) + "."; break;
    case 1: s = std::string(rng.pick(kComments)) + "."; break;
    case 2: s = std::string("Talked about the ") + t.nouns[a] + " and the " + t.nouns[b] + "."; break;
    default: s = std::string("The ") + t.nouns[a] + " is " + rng.pick(kStates) + "."; break;
    }
    return s;
}

std::string paragraph(Rng& rng, const Topic& t) {
    std::string p;
    for (int i = 0, n = 2 + rng.below(4); i < n; ++i) p += (i ? " " : "") + sentence(rng, t);
    return p;
}

std::string tasks(Rng& rng, const Topic& t) {
    std::string out = rng.chance(50) ? "## To do\n\n" : "";
    bool all_done = rng.chance(35);  // some notes have only closed tasks
    for (int i = 0, n = 2 + rng.below(4); i < n; ++i)
        out += std::string(all_done || rng.chance(45) ? "- [x] " : "- [ ] ") + rng.pick(kVerbs) +
               " the " + t.nouns[rng.below(8)] + "\n";
    return out;
}

std::string body(Rng& rng, const Topic& t, const std::string& title, int index) {
    std::string md = "# " + title + "\n\n" + rng.pick(kOpeners) + " " + paragraph(rng, t) + "\n";
    std::string s = slug(title) + "-" + std::to_string(index);
    if (rng.chance(t.task_pct)) md += "\n" + tasks(rng, t);
    if (rng.chance(50)) md += "\n" + paragraph(rng, t) + "\n";
    if (rng.chance(t.image_pct))
        md += std::string("\n![") + t.nouns[rng.below(8)] + "](images/" + s + "." + rng.pick(kImageExts) + ")\n";
    if (rng.chance(t.file_pct))
        md += std::string("\nAttached: [the ") + rng.pick(kFileNames) + "](files/" + s + "." +
              rng.pick(kFileExts) + ")\n";
    if (rng.chance(t.audio_pct))
        md += rng.chance(50) ? "\nRecording: ![[recordings/" + s + ".m4a]]\n"
                             : std::string("\n[Voice memo](audio/") + s + "." + rng.pick(kAudioExts) + ")\n";
    if (rng.chance(15)) md += "\nMore at <https://example.com/" + s + ">.\n";
    if (rng.chance(8)) md += "\n```\n- [ ] this line is code, not a task\n```\n";
    return md;
}

}  // namespace

DemoData build_demo(long long user_id, int notes, unsigned seed) {
    DemoData data;
    const std::string scope = std::to_string(user_id) + ":" + std::to_string(seed);
    constexpr int kTopicCount = static_cast<int>(sizeof kTopics / sizeof kTopics[0]);
    for (const Topic& t : kTopics)
        data.collections.push_back(CollectionInput{
            stable_uuid("notesd:demo-collection:" + scope + ":" + t.title), t.title,
            t.description ? std::optional<std::string>(t.description) : std::nullopt, kMaxTime, kMinTime});
    Rng rng(0x6E6F746573ULL ^ seed);  // "notes"
    for (int i = 0; i < notes; ++i) {
        int topic = rng.below(kTopicCount);
        const Topic& t = kTopics[topic];
        std::string title = fill(rng.pick(kTitleForms), t.subjects[rng.below(8)]);
        NoteInput n;
        n.id = stable_uuid("notesd:demo-note:" + scope + ":" + std::to_string(i));
        n.content = body(rng, t, title, i);
        // Whole seconds mostly, milliseconds now and then; updates within 60 days, in the year.
        long long span_s = (kYearUs - 61 * kDayUs) / 1000000;
        n.created_us = kStartUs + static_cast<long long>(rng.next() % static_cast<std::uint64_t>(span_s)) * 1000000;
        if (rng.chance(10)) n.created_us += rng.below(1000) * 1000LL;
        n.updated_us = n.created_us;
        if (!rng.chance(40)) n.updated_us += rng.below(60) * kDayUs + rng.below(86400) * 1000000LL;
        std::vector<int> topics;
        if (!rng.chance(6)) topics.push_back(topic);          // a few notes in no collection
        if (rng.chance(10)) topics.push_back(rng.below(kTopicCount));  // some in two
        for (int k : topics) {
            CollectionInput& c = data.collections[static_cast<std::size_t>(k)];
            if (std::find(n.collection_ids.begin(), n.collection_ids.end(), c.id) != n.collection_ids.end()) continue;
            n.collection_ids.push_back(c.id);
            c.created_us = std::min(c.created_us, n.created_us);
            c.updated_us = std::max(c.updated_us, n.updated_us);
        }
        DerivedNote d = derive_note(n.content, std::nullopt);
        n.title = d.title;
        n.snippet = d.snippet;
        n.flags = d.flags;
        n.attachments = local_attachments(user_id, n.id, d.links);
        n.plain_text = std::move(d.plain_text);
        data.notes.push_back(std::move(n));
    }
    for (CollectionInput& c : data.collections)
        if (c.created_us == kMaxTime) c.created_us = c.updated_us = kStartUs;  // empty (tiny demos)
    return data;
}

void generate_demo(NoteWriter& writer, long long user_id, int notes, unsigned seed) {
    DemoData data = build_demo(user_id, notes, seed);
    constexpr std::size_t kBatch = 200;
    for (std::size_t i = 0; i < data.notes.size() || i == 0; i += kBatch) {
        std::vector<NoteInput> batch(data.notes.begin() + static_cast<long>(i),
                                     data.notes.begin() + static_cast<long>(std::min(i + kBatch, data.notes.size())));
        writer.write_batch(user_id, i == 0 ? data.collections : std::vector<CollectionInput>{}, batch);
        if (data.notes.empty()) break;
    }
    writer.compact_index(user_id);
}

}  // namespace notesd
