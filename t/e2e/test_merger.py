"""The background merger (issue 19, server/merger.hpp): a child of the master folds the pending
index entries that API writes leave into segments and merges segments, in bounded steps, without
`notesctl pack`; searches give the same pages throughout and `notesctl check` finds the index
exact, also when the merger is killed with SIGKILL again and again in the middle of merges."""
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
import unittest

from harness import Stack
from test_import import TIL, md_files, search_pages

# A merger that acts at once: passes every 50 ms, rows folded after 200 ms, restarted 100 ms
# after it dies.
MERGER = {"merge_interval_ms": 50, "merge_fold_delay_ms": 200, "respawn_backoff_max_ms": 100}

def steps(stack):
    """Each merge step so far (Stack.merge_steps)."""
    return stack.merge_steps()


def merger_pid(stack):
    found = re.findall(r'msg="merger started" merger=(\d+)', stack.logs())
    return int(found[-1]) if found else None


def wait_for(test, predicate, what, timeout=60.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.05)
    test.fail("timed out waiting for " + what)


def wait_quiet(stack, quiet=1.5, timeout=120.0):
    """Until no merge step was logged for `quiet` seconds."""
    end = time.monotonic() + timeout
    seen, since = len(steps(stack)), time.monotonic()
    while time.monotonic() < end:
        time.sleep(0.1)
        n = len(steps(stack))
        if n != seen:
            seen, since = n, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return
    raise AssertionError("the merger did not settle")


def create(test, stack, token, content):
    r = stack.request("POST", "/v2/notes", body={"content": content}, token=token)
    test.assertEqual(r.status, 200, r.text)
    return r.json()["id"]


def longest(stack):
    """The longest write transaction of any merge step: "N.N ms (op)"."""
    s = max(steps(stack), key=lambda s: s[5], default=None)
    return "%.1f ms (%s)" % (s[5] / 1000.0, s[6]) if s else "none"


class FoldsApiWrites(unittest.TestCase):
    """API writes leave pending index entries; the merger folds them into segments (a bounded
    batch of notes per transaction) and merges the segments, with no pack: a pack afterwards finds
    nothing to fold, searches give the pages they gave before, check finds the index exact."""

    def test_rows_folded_and_merged_in_the_background(self):
        files = sorted(md_files(TIL))[:160]
        self.assertEqual(len(files), 160, "the shared corpus is missing: %s" % TIL)
        with Stack(config=MERGER) as stack:
            user, token = stack.create_user("apiwriter")
            ids = []
            for f in files:
                with open(f, encoding="utf-8", errors="replace") as fh:
                    ids.append(create(self, stack, token, fh.read()))
            wait_for(self, lambda: sum(s[1] for s in steps(stack)) == 160, "160 notes folded")
            # Updates and deletes of folded notes: dead in their segments, pending entries for
            # the new versions and for the deletes' document frequencies, folded again.
            for i in ids[:20]:
                r = stack.request("PATCH", "/v2/notes/" + i, token=token,
                                  body={"content": "# rewritten %s\n\ngit rebase and python list" % i,
                                        "version": 1})
                self.assertEqual(r.status, 200, r.text)
            for i in ids[20:30]:
                self.assertEqual(stack.request("DELETE", "/v2/notes/" + i, token=token).status, 200)
            pages = search_pages(self, stack, token)
            self.assertGreater(sum(len(p) for p in pages), 20)
            wait_for(self, lambda: sum(s[1] for s in steps(stack)) == 190, "190 entries folded")
            wait_quiet(stack)
            done = steps(stack)
            self.assertGreater(sum(s[2] for s in done), 0, "no segments merged")
            self.assertFalse(any(s[3] for s in done))
            self.assertEqual(search_pages(self, stack, token), pages)
            out = stack.notesctl("check", user, check=False)
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
            # Nothing left to fold. The merger keeps up to MergePolicy::max_segments (8)
            # segments of different tiers, a pack at most kMaxSegments (4): past 4 the pack
            # merges the smallest into one, leaving exactly 4. How many the merger leaves
            # depends on its fold sizes, which follow the machine's speed.
            out = stack.notesctl("pack", user)
            packed = re.search(r"folded (\d+) notes into the search index's segments, "
                               r"merged (\d+) segments \((\d+) left\)", out.stdout)
            self.assertIsNotNone(packed, out.stdout)
            folded, merged, left = (int(g) for g in packed.groups())
            self.assertEqual(folded, 0, out.stdout)
            if merged == 0:
                self.assertIn(left, range(1, 5), out.stdout)
            else:
                self.assertEqual((merged >= 2, left), (True, 4), out.stdout)
            self.assertEqual(search_pages(self, stack, token), pages)
            sys.stderr.write("FoldsApiWrites: %d merge steps, longest write transaction %s\n"
                             % (len(done), longest(stack)))
            self.assertEqual(stack.integrity_problems(), [])


class BacklogWorkedOffAtOnce(unittest.TestCase):
    """A backlog larger than one pass folds (64 steps of at most 32 notes: 2,048) is worked off
    pass after pass, not one pass per merge_interval_ms: with a ten-minute interval, 4,300 API
    creates are all folded while the test waits. A pass during the writes folds 2,048 at most,
    so a restarted merger finds more than one pass's worth; one pass and the interval's sleep
    would leave some pending."""
    NOTES = 4300

    def test_backlog_folded_without_waiting_for_the_interval(self):
        config = dict(MERGER, merge_interval_ms=600000, merge_fold_delay_ms=0)
        with Stack(config=config) as stack:
            user, token = stack.create_user("backlog")
            errors = []

            def writer(k):
                for i in range(k, self.NOTES, 8):
                    r = stack.request("POST", "/v2/notes", token=token,
                                      body={"content": "# n%d\n\nbacklog" % i})
                    if r.status != 200:
                        errors.append(r.text)

            threads = [threading.Thread(target=writer, args=(k,)) for k in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.assertEqual(errors, [])
            os.kill(merger_pid(stack), signal.SIGKILL)  # restarted at once: a pass now
            wait_for(self, lambda: sum(s[1] for s in steps(stack)) == self.NOTES,
                     "%d notes folded" % self.NOTES, timeout=120.0)
            out = stack.notesctl("check", user, check=False)
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)


def segment_count(stack, user):
    """The user's published segments (a step's hidden one, note_count 0, aside)."""
    return int(stack.sql("SELECT COUNT(*) FROM index_segments s JOIN users u ON u.id = s.user_id "
                         "WHERE u.name = '%s' AND s.note_count > 0;" % user).strip())


STEADY_WORDS = ("river stone lantern copper meadow harbor violet engine orchard signal ember "
                "canyon willow marble thunder pepper glacier saddle basket comet").split()


def steady_text(i):
    """About 150 words, different for every i, from a small vocabulary."""
    n = len(STEADY_WORDS)
    return " ".join(STEADY_WORDS[(i * 7 + j * (1 + i % 5)) % n] + str(j % 11) for j in range(150))


def nice_of(pid):
    """The nice value of a process's main thread (/proc/PID/stat's 19th field)."""
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[16])


class MergerComputesBehindTheWorkers(unittest.TestCase):
    """The merger computes at merge_nice above the workers' nice value (server/merger_priority.hpp)
    and takes theirs back around each write transaction; with merge_nice 0 it keeps theirs.
    Where the process could not take its priority back it keeps its own and says so."""

    def merger_nice(self, config):
        with Stack(config=dict(MERGER, **config)) as stack:
            wait_for(self, lambda: 'msg="merger running"' in stack.logs(), "the merger")
            line = [l for l in stack.logs().splitlines() if 'msg="merger running"' in l][-1]
            own = nice_of(stack.notesd_proc.pid)
            nice = nice_of(merger_pid(stack))
            # idle between passes: computing priority, not a write's
            user, token = stack.create_user("niced")
            for i in range(70):  # more than a fold's 64: the merger writes while we look
                create(self, stack, token, "niced note %d about rebase" % i)
            wait_for(self, lambda: sum(s[1] for s in steps(stack)) == 70, "70 notes folded")
            wait_quiet(stack, quiet=0.5)
            after = nice_of(merger_pid(stack))
            self.assertEqual(stack.notesctl("check", user, check=False).returncode, 0)
            return own, nice, after, line, stack.logs()

    def test_merger_runs_at_merge_nice_between_writes(self):
        own, nice, after, line, logs = self.merger_nice({"merge_nice": 7})
        if "merger keeps its priority" in logs:
            self.assertEqual((nice, after), (own, own))
            self.assertIn(" nice=0", line)
        else:
            self.assertEqual((nice, after), (min(own + 7, 19), min(own + 7, 19)))
            self.assertIn(" nice=7", line)

    def test_merge_nice_zero_keeps_the_workers_priority(self):
        own, nice, after, line, logs = self.merger_nice({"merge_nice": 0})
        self.assertEqual((nice, after), (own, own))
        self.assertIn(" nice=0", line)
        self.assertNotIn("merger keeps its priority", logs)


class SegmentsStayFewUnderSustainedWrites(unittest.TestCase):
    """Writes that do not stop keep a fold due at every merger step (merge_fold_delay_ms 0: any
    pending note is due). Merges still run between the folds: the user's segments stay within
    twice MergePolicy::max_segments (16) plus the one a merge may add before it drops its
    inputs. Under the policy that put every due fold before any merge, each fold added a
    segment for good (2,024 after a minute of the benchmark's write_create)."""
    SECONDS = 8.0
    MOST = 17

    def test_segment_count_bounded_while_writing(self):
        config = dict(MERGER, merge_fold_delay_ms=0)
        with Stack(config=config) as stack:
            user, token = stack.create_user("steady")
            stop = threading.Event()
            errors = []

            def writer(k):
                i = k
                while not stop.is_set():
                    r = stack.request("POST", "/v2/notes", token=token,
                                      body={"content": "# steady %d\n\n%s" % (i, steady_text(i))})
                    if r.status != 200:
                        errors.append(r.text)
                    i += 8

            threads = [threading.Thread(target=writer, args=(k,)) for k in range(8)]
            for t in threads:
                t.start()
            counts = []
            try:
                end = time.monotonic() + self.SECONDS
                while time.monotonic() < end:
                    counts.append(segment_count(stack, user))
                    time.sleep(0.1)
            finally:
                stop.set()
                for t in threads:
                    t.join()
            self.assertEqual(errors, [])
            folds = sum(1 for s in steps(stack) if s[1] > 0)
            # enough folds that, one segment each, they would have passed the bound
            self.assertGreater(folds, 2 * self.MOST, "folds during the writes")
            self.assertLessEqual(max(counts), self.MOST, counts)
            wait_for(self, lambda: stack.notesctl("check", user, check=False).returncode == 0,
                     "notesctl check to find the index exact", timeout=60.0)


def kill_merger(stack, rnd, seen, wait_min=0.02, wait_max=0.25):
    """SIGKILL of the running merger after a random moment; 1 when one was killed."""
    time.sleep(rnd.uniform(wait_min, wait_max))
    return kill_merger_now(stack, seen)


def kill_merger_now(stack, seen):
    """SIGKILL of the running merger (not one killed before); 1 when one was killed."""
    pid = merger_pid(stack)
    if pid is None or pid in seen:
        return 0
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return 0
    seen.add(pid)
    return 1


def in_hook_pause(stack, hook):
    """True while the running merger waits in a test hook's pause: its last line is the
    hook's ("test hook: fold written" or "test hook: merge written"), before its publish."""
    logs = stack.logs()
    return logs.rfind('msg="test hook: %s"' % hook) > max(
        logs.rfind('msg="merge step"'), logs.rfind('msg="merger running"'))


def kill_in_hook_pause(test, stack, seen, hook, timeout=60.0):
    """SIGKILL of the merger inside a test hook's pause; 1 (fails the test when none came)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if in_hook_pause(stack, hook) and kill_merger_now(stack, seen):
            return 1
        time.sleep(0.02)
    test.fail("no step paused in the test hook '%s'" % hook)


class KillLoopDuringFolds(unittest.TestCase):
    """SIGKILL of the merger, again and again, while API creates and updates keep it folding
    pending entries: a fold writes its segment hidden in transactions of its own and publishes
    it with the user locked, so a kill before the publish leaves a hidden segment (the next
    merger removes it, the entries stay pending) and one after leaves them folded. Once all is
    folded, `notesctl check` finds the index exact and a pack changes no search page.

    The window between the hidden write and the publish is a few milliseconds, which random
    kills hit by chance only (a run of 40 rounds once hit it once). So the stack runs
    t/notesd-test-hooks with NOTESD_TEST_FOLD_PAUSE_MS: each fold logs when its segment is
    written and waits before the publish, and every other round kills the merger inside that
    wait; the other rounds kill at random moments."""
    PAUSE_MS = 1000
    ROUNDS = 6

    def test_kill_merger_while_it_folds(self):
        files = sorted(md_files(TIL))[:150]
        self.assertEqual(len(files), 150, "the shared corpus is missing: %s" % TIL)
        rnd = random.Random(23)
        with Stack(config=MERGER, test_hooks=True,
                   env={"NOTESD_TEST_FOLD_PAUSE_MS": str(self.PAUSE_MS)}) as stack:
            user, token = stack.create_user("killfolds")
            killed, seen, ids = 0, set(), []
            texts = []
            for f in files:
                with open(f, encoding="utf-8", errors="replace") as fh:
                    texts.append(fh.read())

            def interrupted():
                return len(re.findall(r'msg="merger removed interrupted merges"', stack.logs()))

            targeted = 0
            for n in range(self.ROUNDS):
                for k in range(64):
                    ids.append(create(self, stack, token, texts[(64 * n + k) % len(texts)]))
                wait_for(self, lambda: merger_pid(stack) not in seen, "a new merger")
                if n % 2 == 0:
                    if not in_hook_pause(stack, "fold written"):  # the round's notes may all be folded already
                        ids.append(create(self, stack, token, texts[n]))
                    killed += kill_in_hook_pause(self, stack, seen, "fold written")
                    targeted += 1
                else:
                    killed += kill_merger(stack, rnd, seen, 0.0, 1.2)
            for n, i in enumerate(ids[:60]):
                r = stack.request("PATCH", "/v2/notes/" + i, token=token,
                                  body={"content": "# rewritten %d\n\ngit rebase and python list" % n,
                                        "version": 1})
                self.assertEqual(r.status, 200, r.text)
                if n % 10 == 9:
                    killed += kill_merger(stack, rnd, seen, 0.0, 1.2)
            wait_for(self, lambda: merger_pid(stack) not in seen, "a new merger")
            wait_quiet(stack, quiet=self.PAUSE_MS / 1000.0 + 1.0)
            out = stack.notesctl("check", user, check=False)
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
            pages = search_pages(self, stack, token)
            self.assertGreater(sum(len(p) for p in pages), 20)
            stack.notesctl("pack", user)
            self.assertEqual(search_pages(self, stack, token), pages)
            out = stack.notesctl("check", user, check=False)
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
            died = len(re.findall(r'msg="merger died; restarting"', stack.logs()))
            folded = sum(s[1] for s in steps(stack))
            sys.stderr.write("KillLoopDuringFolds: %d creates, %d kills (%d inside a fold's pause), "
                             "%d left a hidden segment, %d notes folded, longest write transaction "
                             "%s\n" % (len(ids), killed, targeted, interrupted(), folded,
                                        longest(stack)))
            self.assertEqual(died, killed)
            self.assertGreaterEqual(killed, 5, "the loop killed too few mergers")
            self.assertGreaterEqual(interrupted(), targeted, "a kill inside a fold left no hidden segment")
            self.assertGreater(folded, 0)
            self.assertEqual(stack.integrity_problems(), [])


class KillLoopDuringBackgroundMerge(unittest.TestCase):
    """SIGKILL of the merger, again and again, while it merges the segments of users that
    `notesctl import` writes (batches of 100 notes: a segment each): every transaction of a
    merge step leaves an exact index, so after each round `notesctl check` finds it exact and
    searches give the same pages; the restarted merger removes what the killed one left (its
    log line shows that kills landed inside merges).

    A merge step's window between its hidden write and its publish is short (term groups made
    it shorter still: one fresh-clone run's 26 random kills hit it once). So the stack runs
    t/notesd-test-hooks with NOTESD_TEST_MERGE_PAUSE_MS, and every other round kills the merger
    inside that pause once, besides the random kills of every round."""
    ROUNDS = 5
    PAUSE_MS = 300

    def test_kill_merger_loop_then_check(self):
        self.assertTrue(os.path.isdir(TIL), "the shared corpus is missing: %s" % TIL)
        rnd = random.Random(19)
        with Stack(config=MERGER, test_hooks=True,
                   env={"NOTESD_TEST_MERGE_PAUSE_MS": str(self.PAUSE_MS)}) as stack:
            killed, targeted, seen = 0, 0, set()
            for i in range(self.ROUNDS):
                user, token = stack.create_user("killmerger%d" % i)
                cmd = [stack.binary("notesctl"), "--db", stack.db_url, "import", user, TIL,
                       "--batch", "100", "--no-compact"]
                proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        env=stack._env())
                if i % 2 == 0:  # the import's segments are merged meanwhile, or just after it
                    wait_for(self, lambda: merger_pid(stack) not in seen, "a new merger")
                    killed += kill_in_hook_pause(self, stack, seen, "merge written")
                    targeted += 1
                while proc.poll() is None:
                    killed += kill_merger(stack, rnd, seen)
                self.assertEqual(proc.wait(), 0, proc.stderr.read())
                proc.stderr.close()
                pages = search_pages(self, stack, token)
                for _ in range(3):  # the merges of this user's segments
                    wait_for(self, lambda: merger_pid(stack) not in seen, "a new merger")
                    killed += kill_merger(stack, rnd, seen)
                out = stack.notesctl("check", user, check=False)
                self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
                self.assertEqual(search_pages(self, stack, token), pages)
            wait_for(self, lambda: merger_pid(stack) not in seen, "a new merger")
            wait_quiet(stack)
            for i in range(self.ROUNDS):
                out = stack.notesctl("check", "killmerger%d" % i, check=False)
                self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
            logs = stack.logs()
            interrupted = len(re.findall(r'msg="merger removed interrupted merges"', logs))
            died = len(re.findall(r'msg="merger died; restarting"', logs))
            sys.stderr.write("KillLoopDuringBackgroundMerge: %d kills (%d inside a merge's pause), "
                             "%d left a hidden segment, %d merge steps, longest write transaction "
                             "%s\n" % (killed, targeted, interrupted, len(steps(stack)), longest(stack)))
            self.assertEqual(died, killed)
            self.assertGreaterEqual(interrupted, targeted, "a kill inside a merge left no hidden segment")
            self.assertGreaterEqual(targeted, 3)
            self.assertEqual(stack.integrity_problems(), [])


if __name__ == "__main__":
    unittest.main()
