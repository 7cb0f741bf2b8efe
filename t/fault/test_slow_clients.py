"""Fault rows: clients slow on purpose, Debian's slowhttptest as the attacker (from 127.0.0.1):
1,000 connections that send their headers (slowloris) or their body (slow body) a few bytes
every 3 s. nginx holds them without letting them take anything well-behaved clients need: a
probe from another address keeps getting its 200 fast (p99 < 1 s: a functional bound, far above
the few milliseconds a probe takes on an idle machine)."""
import time

import faultlib


class SlowClients(faultlib.StackCase):

    def attack(self, mode, path, extra=()):
        # Opened at 250/s: all 1,000 are there after 4 s; the probe then runs for 12 s (nginx's
        # header timeout ends the slowloris connections after 10 s).
        with faultlib.SlowHttpTest(self.stack.url(path), mode, connections=1000, rate=250,
                                   interval=3, length=30, extra=extra) as attacker:
            time.sleep(5)
            with faultlib.Probe(self.stack, "/v2/notes?limit=1", self.token) as probe:
                time.sleep(12)
        print("slowhttptest %s: most connections open at once %d; probe: %s"
              % (mode, attacker.most_connected(), probe.summary()))
        self.assert_probe_answered(probe, within_s=1.0)
        self.assertGreaterEqual(attacker.most_connected(), 900,
                                "the attack did not get going:\n" + attacker.text()[-2000:])

    def test_slowloris(self):
        self.attack("-H", "/v2/notes")

    def test_slow_body(self):
        self.attack("-B", "/v2/notes/search", extra=["-s", "8192", "-f", "application/json"])
