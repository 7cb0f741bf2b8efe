#!/usr/bin/env python3
"""Deterministic generator of realistic benchmark notes, one JSON Lines file per user.

    python3 tools/gen_notes.py --users 10 --notes-per-user 100000 --seed 1 --out DIR

writes DIR/user01.jsonl ... DIR/user10.jsonl in the Mem shape that `notesctl import USER PATH`
reads: about 20 collection objects first ({"type": "collection", ...}), then the notes
({"id", "title", "content", "created_at", "updated_at", "collection_ids"}).

The text is markdown over a Zipf-distributed vocabulary: a few hundred real English words (the
most frequent ranks are function words, as in real text) mixed with 30,000 made-up
English-like words built from syllables (a few thousand of them common, the rest a long tail),
so that frequent, mid-frequency and rare terms all exist. About 5% of the notes carry Chinese, Japanese or Korean passages. Lengths follow a
log-normal distribution (most notes 50-400 words, a long tail up to several thousand words).
Some notes hold task lists (open and done), images, links to files, headings, lists and code.
Timestamps spread over the two years before 2025-06-01.

Everything comes from random.Random seeded by (seed, user number): the same arguments give
byte-identical files, and user k's file does not depend on how many users are generated. Only
the Python standard library is used. The module is importable: bench.py takes the vocabulary
from vocabulary() to build search queries of known frequency.
"""
import argparse
import bisect
import itertools
import json
import math
import os
import random
import sys
import time
import uuid
from multiprocessing import Pool

GENERATOR_VERSION = 1  # bump when the output changes, so that cached benchmark data is rebuilt
# Made-up words: the first few thousand take mid ranks, the long tail gives rare terms (a word
# at rank 30,000 occurs about 80 times in 100,000 notes).
MADE_UP_WORDS = 30000

END_EPOCH = 1748736000  # 2025-06-01T00:00:00Z: timestamps fall in the two years before it
SPAN_S = 2 * 365 * 86400

# The most frequent English words, roughly in frequency order: they take the top ranks.
FUNCTION_WORDS = """the of and to a in is it you that he was for on are with as his they be at
one have this from or had by not but what some we can out other were all there when up use your
how said an each she which do their time if will way about many then them would write like so
these her long make thing see him two has look more day could go come did no most my over know
than call first who may down side been now find any new work part take get place made live where
after back little only round man year came show every good me give our under name very through
just form much great think say help low line before turn cause same mean differ move right boy
old too does tell set three want well also small end put home read hand large add even here must
big high such why ask went men need land different us try kind off again near should""".split()

# Real content words of a working person's notes; they mix into the ranks below the top.
CONTENT_WORDS = """meeting project team notes idea draft review plan budget client customer
release deploy server database query index search cache latency error bug fix test build code
design product market sales report quarter goal deadline schedule call email follow summary
question answer decision action item owner status update weekly monthly agenda feedback hiring
interview candidate offer salary contract invoice payment travel flight hotel booking trip
train station airport visa passport restaurant recipe dinner lunch breakfast coffee tea garden
book chapter author reading article paper research study experiment result analysis data model
chart graph table metric dashboard alert incident outage postmortem timeline root cause network
storage backup restore migration schema kubernetes docker container cluster node pod service
api endpoint request response token session cookie browser mobile android iphone laptop
keyboard monitor office desk remote home family weekend holiday birthday gift doctor health
sleep running workout gym yoga bike walk park river mountain beach weather rain snow summer
winter spring autumn morning evening night music song album concert movie film episode podcast
interview lecture course lesson exercise homework exam grade school university teacher student
library file system folder document spreadsheet presentation slide template invoice receipt
password account security privacy policy compliance audit risk legal license patent contract
strategy roadmap milestone sprint backlog ticket issue pull merge branch commit refactor
performance memory thread process queue worker scheduler config logging monitoring tracing
""".split()

# Common CJK vocabulary for the ~5% of notes with Chinese, Japanese or Korean passages.
CHINESE = """会议 项目 东京 北京 上海 深圳 数据库 服务器 搜索 文件 系统 学习 工作 时间 问题 方法
设计 开发 测试 用户 笔记 今天 明天 我们 需要 完成 计划 报告 团队 产品 市场 客户 网络 安全 性能
优化 代码 文档 版本 发布 部署 读书 旅行 朋友 家人 晚饭 咖啡 天气 周末 预算 目标 总结 想法 研究
数据 分析 模型 结果 实验 论文 老师 学生 课程 音乐 电影""".split()
JAPANESE = """東京都庁 会議室 議事録 勉強会 日本語 検索 東京 大阪 京都 確認 予定 資料 打ち合わせ 新しい
機能 開発 テスト データベース サーバー ファイル システム メモ プロジェクト 週末 旅行 天気 料理
読書 映画 音楽 仕事 会社 チーム 報告 計画 改善 設計 品質 顧客 予算 締め切り 課題 結果 分析
""".split()
JAPANESE_PARTICLES = ["は", "を", "の", "に", "で", "と", "が", "も"]
KOREAN = """회의 프로젝트 서울 부산 검색 데이터베이스 서버 파일 시스템 개발 테스트 사용자 오늘 내일
계획 보고서 팀 제품 문서 배포 확인 일정 자료 여행 날씨 음식 커피 주말 가족 친구 책 영화 음악
회사 고객 예산 목표 결과 분석 설계 품질 개선 학습 수업 학생""".split()

COLLECTION_NAMES = """Work;Personal;Reading list;Recipes;Meeting notes;Projects;Ideas;Travel;
Journal;Research;Book notes;Health;Finance;Learning;Home;Writing;Podcasts;Code snippets;Inbox;
Archive;Team;Clients;Hiring;Design;Infrastructure;Garden;Music;Conferences""".replace("\n", "").split(";")

ONSETS = ("b br bl c ch cl cr d dr f fl fr g gl gr h j k kl l m n p pl pr qu r s sc sh sk sl sm sn "
          "sp st str sw t th tr v w wh z").split()
VOWELS = "a e i o u a e i o ai ea ee oo ou io ia y".split()
INNER_CODAS = ["", "", "", "", "n", "r", "l", "s"]
CODAS = [""] * 6 + "n r s t l m nd st ck ng x rt nt ll sh th".split()

FILE_EXT = ["pdf", "docx", "xlsx", "csv", "zip", "txt", "pptx"]
IMAGE_EXT = ["png", "jpg", "jpeg", "gif", "webp"]


def made_up_words(seed, count):
    """`count` distinct English-like words built from syllables, in a deterministic order."""
    rng = random.Random("words:%d" % seed)
    seen = set(FUNCTION_WORDS) | set(CONTENT_WORDS)
    out = []
    while len(out) < count:
        n = rng.choices((1, 2, 3), weights=(3, 6, 2))[0]
        # Inner syllables end softly; only the last one takes a consonant cluster.
        w = "".join(rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(INNER_CODAS)
                    for _ in range(n - 1))
        w += rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS)
        if 3 <= len(w) <= 11 and w not in seen:
            seen.add(w)
            out.append(w)
    return out


def vocabulary(seed, made_up=MADE_UP_WORDS):
    """The ranked vocabulary (index 0 is the most frequent word) shared by every user."""
    rng = random.Random("vocab:%d" % seed)
    rest = list(dict.fromkeys(CONTENT_WORDS)) + made_up_words(seed, made_up)
    # Real content words lean towards the upper ranks, as in real notes.
    rest.sort(key=lambda w: rng.random() * (0.02 if w in CONTENT_WORDS else 1.0))
    return list(dict.fromkeys(FUNCTION_WORDS)) + rest


def zipf_cum_weights(n, s=1.0, q=2.7):
    """Cumulative Zipf-Mandelbrot weights 1/(rank+q)^s for ranks 1..n."""
    return list(itertools.accumulate(1.0 / (r + q) ** s for r in range(1, n + 1)))


def word_probability(seed, made_up=MADE_UP_WORDS):
    """{word: probability of one running word} for bench.py's query classes."""
    words = vocabulary(seed, made_up)
    cw = zipf_cum_weights(len(words))
    total = cw[-1]
    prev = 0.0
    out = {}
    for w, c in zip(words, cw):
        out[w] = (c - prev) / total
        prev = c
    return out


def rfc3339(us):
    """Microsecond epoch to 2024-01-02T03:04:05.678901Z."""
    s, frac = divmod(us, 1000000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + ".%06dZ" % frac


class UserGenerator:
    """Generates one user's collections and notes from its own random stream."""

    def __init__(self, seed, user, words, cum_weights, n_collections=20):
        self.rng = random.Random("user:%d:%d" % (seed, user))
        self.words = words
        self.cw = cum_weights
        self.total = cum_weights[-1]
        self.cjk_cw = {name: zipf_cum_weights(len(lst)) for name, lst in
                       (("zh", CHINESE), ("ja", JAPANESE), ("ko", KOREAN))}
        names = COLLECTION_NAMES[:]
        self.rng.shuffle(names)
        self.collections = []
        for i in range(n_collections):
            title = names[i] if i < len(names) else "%s %d" % (names[i % len(names)], i // len(names) + 1)
            created = (END_EPOCH - SPAN_S) * 1000000 + self.rng.randrange(90 * 86400 * 1000000)
            self.collections.append({
                "type": "collection", "id": self.uuid(), "title": title,
                "description": self.sentence(4, 12) if self.rng.random() < 0.6 else None,
                "created_at": rfc3339(created),
                "updated_at": rfc3339(END_EPOCH * 1000000 - self.rng.randrange(30 * 86400 * 1000000)),
            })
        # Collection sizes are skewed too: a few big ones, a long tail of small ones.
        self.coll_cw = zipf_cum_weights(n_collections, s=1.1, q=1.0)

    def uuid(self):
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def draw(self, k):
        return self.rng.choices(self.words, cum_weights=self.cw, k=k)

    def sentence(self, lo, hi):
        w = self.draw(self.rng.randint(lo, hi))
        s = " ".join(w)
        return s[0].upper() + s[1:] + "."

    def paragraph(self, n_words):
        """Sentences of 5-22 words from one draw of n_words words, lightly decorated."""
        rng = self.rng
        w = self.draw(n_words)
        if rng.random() < 0.15:  # emphasis or inline code on one word
            i = rng.randrange(n_words)
            w[i] = rng.choice(("**%s**", "*%s*", "`%s`")) % w[i]
        out = []
        i = 0
        while i < n_words:
            j = min(n_words, i + rng.randint(5, 22))
            s = " ".join(w[i:j])
            out.append(s[0].upper() + s[1:] + rng.choice(".....?!:"))
            i = j
        return " ".join(out)

    def cjk_paragraph(self):
        rng = self.rng
        lang = rng.choice(("zh", "zh", "ja", "ko"))
        lst = {"zh": CHINESE, "ja": JAPANESE, "ko": KOREAN}[lang]
        parts = []
        for _ in range(rng.randint(1, 4)):
            w = rng.choices(lst, cum_weights=self.cjk_cw[lang], k=rng.randint(4, 14))
            if lang == "zh":
                parts.append("".join(w) + "。")
            elif lang == "ja":
                parts.append("".join(x + rng.choice(JAPANESE_PARTICLES) for x in w[:-1]) + w[-1] + "。")
            else:
                parts.append(" ".join(w) + ".")
        return (" " if lang == "ko" else "").join(parts)

    def title(self):
        w = self.draw(self.rng.randint(2, 7))
        while len(w) > 1 and w[0] in FUNCTION_WORDS[:30]:
            w.pop(0)
        t = " ".join(w)
        return t[0].upper() + t[1:]

    def n_words(self):
        # log-normal: median ~150 words, 5%..95% ~ 45..500, a long tail clamped at 6000
        return max(3, min(6000, int(self.rng.lognormvariate(math.log(150), 0.75))))

    def task_list(self):
        rng = self.rng
        done_share = rng.choice((0.0, 0.3, 0.7, 1.0))
        return "\n".join("- [%s] %s" % ("x" if rng.random() < done_share else " ", self.sentence(2, 8)[:-1])
                         for _ in range(rng.randint(1, 8)))

    def bullet_list(self):
        return "\n".join("- " + self.sentence(2, 10)[:-1] for _ in range(self.rng.randint(2, 7)))

    def image(self):
        rng = self.rng
        name = "%s.%s" % (self.words[rng.randrange(200, 2000)], rng.choice(IMAGE_EXT))
        if rng.random() < 0.5:
            return "![%s](https://images.example.com/%08x/%s)" % (self.words[rng.randrange(100, 1000)],
                                                               rng.getrandbits(32), name)
        return "![](attachments/%s)" % name

    def file_link(self):
        rng = self.rng
        name = "%s-%s.%s" % (self.words[rng.randrange(100, 1500)], self.words[rng.randrange(100, 3000)],
                             rng.choice(FILE_EXT))
        if rng.random() < 0.5:
            return "[%s](https://files.example.com/%08x/%s)" % (name, rng.getrandbits(32), name)
        return "[%s](attachments/%s)" % (name, name)

    def code_block(self):
        w = self.draw(self.rng.randint(3, 12))
        return "```\n%s(%s)\n```" % ("_".join(w[:2]), ", ".join(w[2:]))

    def body(self, n):
        """Markdown blocks totalling about n words."""
        rng = self.rng
        blocks = []
        left = n
        while left > 0:
            k = min(left, rng.randint(20, 120))
            if n > 300 and rng.random() < 0.12:
                blocks.append("## " + self.title())
            blocks.append(self.paragraph(k))
            left -= k
            r = rng.random()
            if r < 0.08:
                blocks.append(self.bullet_list())
            elif r < 0.10:
                blocks.append("> " + self.sentence(5, 20))
            elif r < 0.12:
                blocks.append(self.code_block())
        return blocks

    def note(self):
        rng = self.rng
        blocks = self.body(self.n_words())
        title = self.title() if rng.random() < 0.8 else None
        if rng.random() < 0.05:
            blocks.insert(rng.randrange(len(blocks) + 1), self.cjk_paragraph())
            if title is not None and rng.random() < 0.5:
                title = self.cjk_paragraph()[:20].rstrip("。. ")
        if rng.random() < 0.15:
            blocks.insert(rng.randrange(len(blocks) + 1), self.task_list())
        if rng.random() < 0.08:
            for _ in range(rng.choice((1, 1, 1, 2, 3))):
                blocks.insert(rng.randrange(len(blocks) + 1), self.image())
        if rng.random() < 0.05:
            blocks.insert(rng.randrange(len(blocks) + 1), "Attached: " + self.file_link())
        if title is not None:
            blocks.insert(0, "# " + title)
        created = END_EPOCH * 1000000 - int(SPAN_S * 1000000 * rng.random() ** 1.3)
        r = rng.random()
        if r < 0.5:
            updated = created
        else:  # edited later: mostly soon after, sometimes much later
            updated = min(END_EPOCH * 1000000, created + int(rng.expovariate(1.0 / (86400e6 * (2 if r < 0.9 else 90)))))
        cols = []
        r = rng.random()
        if r < 0.75:
            for _ in range(1 if r < 0.6 else 2):
                c = self.collections[bisect.bisect(self.coll_cw, rng.random() * self.coll_cw[-1])]["id"]
                if c not in cols:
                    cols.append(c)
        note = {"id": self.uuid()}
        if title is not None:
            note["title"] = title
        note.update({"content": "\n\n".join(blocks) + "\n", "created_at": rfc3339(created),
                     "updated_at": rfc3339(updated), "collection_ids": cols})
        return note


def user_file_name(user):
    return "user%02d.jsonl" % user


def generate_user(seed, user, n_notes, out_dir, made_up=MADE_UP_WORDS, n_collections=20):
    """Writes out_dir/userNN.jsonl (via a temp file renamed at the end); returns its path."""
    words = vocabulary(seed, made_up)
    gen = UserGenerator(seed, user, words, zipf_cum_weights(len(words)), n_collections)
    path = os.path.join(out_dir, user_file_name(user))
    tmp = path + ".tmp"
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    with open(tmp, "w", encoding="utf-8") as f:
        for c in gen.collections:
            f.write(dumps(c) + "\n")
        buf = []
        for i in range(n_notes):
            buf.append(dumps(gen.note()))
            if len(buf) == 1000:
                f.write("\n".join(buf) + "\n")
                buf = []
        if buf:
            f.write("\n".join(buf) + "\n")
    os.replace(tmp, path)
    return path


def _job(args):
    return generate_user(*args)


def generate_many(tasks, jobs=1):
    """tasks: generate_user argument tuples (seed, user, n_notes, out_dir, ...); returns the
    paths in order. With jobs > 1 the users are generated in parallel processes."""
    if jobs > 1 and len(tasks) > 1:
        with Pool(min(jobs, len(tasks))) as pool:
            return pool.map(_job, tasks, chunksize=1)
    return [_job(t) for t in tasks]


def generate(users, notes_per_user, seed, out_dir, jobs=1, first_user=1, n_collections=20):
    """Generates users first_user..first_user+users-1; returns their paths in order."""
    os.makedirs(out_dir, exist_ok=True)
    return generate_many([(seed, u, notes_per_user, out_dir, MADE_UP_WORDS, n_collections)
                          for u in range(first_user, first_user + users)], jobs)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--users", type=int, default=10)
    ap.add_argument("--notes-per-user", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--collections", type=int, default=20, help="collections per user")
    ap.add_argument("--first-user", type=int, default=1, help="number of the first user file")
    ap.add_argument("--jobs", type=int, default=1, help="processes (output does not depend on it)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    t0 = time.monotonic()
    paths = generate(a.users, a.notes_per_user, a.seed, a.out, a.jobs, a.first_user, a.collections)
    dt = time.monotonic() - t0
    n = a.users * a.notes_per_user
    print("generated %d notes for %d users in %.1f s (%.0f notes/s): %s"
          % (n, a.users, dt, n / dt if dt else 0, ", ".join(os.path.basename(p) for p in paths)),
          file=sys.stderr)


if __name__ == "__main__":
    main()
