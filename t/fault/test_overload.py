"""Fault rows: more clients than the service can serve at once. nginx sheds what the pool cannot
take with the JSON 503 (the pool's max_conns, per-address limit_conn) and holds thousands of
connections; no client is ever reset while nginx has file descriptors."""
import os
import time

import faultlib
from harness import Stack


class Overload(faultlib.StackCase):

    def test_2000_connections_get_200_or_json_503_and_a_probe_is_answered(self):
        # 2,000 keep-alive clients on 100 addresses (20 each, under the per-address limit), all
        # sending at once for a few seconds, while a probe from another address asks too.
        with faultlib.Flood(self.stack, self.token, connections=2000, addresses=100) as flood:
            with faultlib.Probe(self.stack, "/v2/notes?limit=1", self.token) as probe:
                time.sleep(6)
        self.assert_flood_clean(flood)
        self.assert_probe_answered(probe, within_s=1.0, allow_503=True)
        print("overload:", flood.summary(), "|", probe.summary())

    def test_one_address_cannot_take_the_pool(self):
        # 300 connections from one address: beyond its 32 requests in progress it gets the JSON
        # 503 at once, and a client at another address is served (200) meanwhile.
        with faultlib.Flood(self.stack, self.token, connections=300, addresses=1) as flood:
            with faultlib.Probe(self.stack, "/v2/notes?limit=1", self.token) as probe:
                time.sleep(4)
        self.assert_flood_clean(flood)
        self.assertIn("503 UNAVAILABLE", flood.kinds, flood.summary())
        self.assert_probe_answered(probe, within_s=1.0, allow_503=False)
        print("one address:", flood.summary(), "|", probe.summary())


class OutOfDescriptors(faultlib.FaultCase):
    """nginx with 256 descriptors (WORKER_CONNECTIONS=512: the sizing rule's ratio) and 600
    clients that keep their connections: the clients beyond what nginx can hold wait in the listen
    backlog until a connection closes, an upstream connection that finds no descriptor left is the
    JSON 503; nobody is reset or closed unanswered. (With as many connections as descriptors,
    nginx starts closing kept-alive connections at 15/16 of its connections, before it runs out of
    descriptors, and clients that just sent a request on one lose it.)"""

    def test_clients_wait_or_get_json_503(self):
        with Stack(config={"workers": 2}, nginx={"WORKER_CONNECTIONS": "512"}) as st:
            token = faultlib.demo_user(st)
            with faultlib.Flood(st, token, connections=600, addresses=30, timeout=60) as flood:
                time.sleep(4)
            with open(os.path.join(st.dir, "logs", "error.log")) as f:
                log = f.read()
        print("out of descriptors:", flood.summary())
        self.assert_flood_clean(flood)
        self.assertIn("Too many open files", log, "nginx never ran out of descriptors")
        self.assertNotIn("worker_connections are not enough", log)
