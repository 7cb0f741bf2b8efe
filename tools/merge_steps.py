#!/usr/bin/env python3
"""How long the background merger's steps hold the write lock (doc/benchmarks.md, "Background
merges"): a stack without a merger, USERS users each importing the til corpus in batches of 100
notes without compaction (19 segments each), then a SIGHUP turns the merger on; once it has
been idle for 2 s, prints the steps, their longest write transactions and `notesctl check`.

    NOTESD_BUILDDIR=. python3 tools/merge_steps.py [USERS]   (default 2; SQLite, or the
    server NOTESD_E2E_DB names, as the e2e suite)
"""
import os
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "t", "e2e"))
from harness import Stack  # noqa: E402
from test_import import TIL  # noqa: E402
import test_merger  # noqa: E402


def main():
    users = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    with Stack(config={"merge_interval_ms": 0}) as st:
        names = []
        for i in range(users):
            name, _ = st.create_user("merge%d" % i)
            names.append(name)
            st.notesctl("import", name, TIL, "--batch", "100", "--no-compact")
        st.write_config(merge_interval_ms=100, merge_fold_delay_ms=200)
        st.signal_master(signal.SIGHUP)
        st.wait_for(lambda: len(test_merger.steps(st)) > 0, "a merge step", timeout=60)
        test_merger.wait_quiet(st, quiet=2.0)
        steps = test_merger.steps(st)
        print("%d steps, %d segments merged, %d write transactions" %
              (len(steps), sum(s[2] for s in steps), sum(s[4] for s in steps)))
        print("longest write transaction per step (ms):",
              " ".join("%.1f" % (s[5] / 1000.0) for s in sorted(steps, key=lambda s: s[5])))
        print("longest:", test_merger.longest(st))
        for name in names:
            print(st.notesctl("check", name, check=False).stderr.strip())


if __name__ == "__main__":
    main()
