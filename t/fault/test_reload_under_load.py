"""Fault row: reloads under load lose nothing. Two floods through the real nginx (lists and
searches, 24 keep-alive connections each) while the master is sent SIGHUP five times, the pool
size changing between 2 and 3 workers: every request is answered 200, none fails or is reset,
the master is the same process and the last generation of workers serves on. (A stop under
load, where every request a worker accepted is answered 200 and the rest get nginx's JSON 503,
is test_supervisor.GracefulStop in the e2e suite.)
"""
import json
import signal
import time
import unittest

import faultlib

RELOADS = 5


class ReloadUnderLoad(faultlib.StackCase):
    stack_args = {"config": {"workers": 2, "stop_timeout_ms": 5000}}

    def test_repeated_sighup_under_load_fails_no_request(self):
        master = self.stack.master_pid()
        old = self.stack.wait_for_workers(2)
        lists = faultlib.Flood(self.stack, self.token, connections=24, addresses=6,
                               path="/v2/notes?limit=5")
        searches = faultlib.Flood(self.stack, self.token, connections=24, addresses=6,
                                  method="POST", path="/v2/notes/search",
                                  body=json.dumps({"query": "review", "limit": 5}).encode())
        sizes = []
        with lists, searches:
            time.sleep(0.5)
            for i in range(RELOADS):
                size = 3 if i % 2 == 0 else 2
                self.stack.write_config(workers=size)
                self.stack.signal_master(signal.SIGHUP)
                sizes.append(size)
                time.sleep(0.4)  # the next reload while this one's old workers may still retire
            new = self.stack.wait_for_workers(sizes[-1], exclude=old, timeout=15)
            time.sleep(0.5)
        for flood in (lists, searches):
            self.assertEqual(flood.errors, [], flood.summary())
            self.assertEqual(flood.connected, flood.n, flood.summary())
            self.assertEqual(set(flood.statuses), {200}, "a reload failed requests: "
                             + flood.summary())
            self.assertGreater(flood.statuses[200], 100, "too little load: " + flood.summary())
        self.assertEqual(self.stack.master_pid(), master)
        self.assertEqual(len(new), sizes[-1])
        st = self.stack.status()
        self.assertEqual(st["pool"]["generation"], 1 + RELOADS)
        self.assertEqual(st["worker_lifecycle"]["crashes"], 0)
        self.assertNotIn("prematurely closed", self.stack.nginx_logs(),
                         "a worker dropped a request it had accepted")
        print("%d reloads under load: lists %s; searches %s"
              % (RELOADS, lists.summary(), searches.summary()))


if __name__ == "__main__":
    unittest.main()
