#!/usr/bin/env python3
"""Failover time of `pricealert run` instances sharing one PostgreSQL store, for
Benchmarks/run-failover.sh (Docs/performance.md#failover).

Starts, all on 127.0.0.1 and in a temporary folder: a PostgreSQL cluster of its own (Debian's
server programs, as the tests' PostgresServer; as `nobody` when run as root), `pricealert
exchange` (the look-alikes, prices every 100 ms), a webhook receiver (here, in Python), and two
`pricealert run` instances on the store with a rule file whose source is the Binance look-alike
and whose rule reminds every second on each of a few markets, so deliveries keep coming.

Then KILLS times: waits a seeded random 1-3 s, kills the leader with SIGKILL, and measures
  - takeover: from the kill to the standby's line saying it leads the source;
  - delivery: from the kill to the first webhook request received after it (the new leader's
    first delivery: the events of the gap it enters, or the next reminder);
starts the killed instance again and waits until it follows the feed before the next round.
Prints one line per kill and the median and maximum of each.

usage: failover.py PRICEALERT_BINARY [KILLS] [SEED]
"""
import http.server, json, os, random, shutil, signal, statistics, subprocess, sys, tempfile
import threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from postgres import Lines, postgres

LEADER_LINE = "source binance: leader in epoch"
STANDBY_LINE = "source binance: standby"


def fail(message):
    print("failover: " + message, file=sys.stderr)
    sys.exit(1)


class Receiver(http.server.BaseHTTPRequestHandler):
    arrivals, cond = [], threading.Condition()

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        with Receiver.cond:
            Receiver.arrivals.append((time.monotonic(), self.headers.get("webhook-id")))
            Receiver.cond.notify_all()
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def first_arrival_after(after, timeout=120):
    deadline = time.monotonic() + timeout
    with Receiver.cond:
        while True:
            for at, _ in Receiver.arrivals:
                if at >= after:
                    return at
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no delivery")
            Receiver.cond.wait(left)


def main():
    if len(sys.argv) < 2:
        fail(__doc__)
    binary = os.path.abspath(sys.argv[1])
    kills = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    folder = tempfile.mkdtemp(prefix="pricealert-failover-")
    children = []
    try:
        pg, url = postgres(folder)
        children.append(pg)
        exchange = subprocess.Popen([binary, "exchange", "--port", "0", "--interval", "100ms"], stderr=subprocess.PIPE)
        children.append(exchange)
        Lines(exchange, open(os.path.join(folder, "exchange.log"), "w")).wait("listening on http://127.0.0.1:")
        with open(os.path.join(folder, "exchange.log")) as f:
            port = int(f.read().split("listening on http://127.0.0.1:")[1].split("/")[0].split()[0])
        receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
        threading.Thread(target=receiver.serve_forever, daemon=True).start()
        rules = {
            "version": 3,
            "sources": {"binance": {"type": "binance", "endpoint": "http://127.0.0.1:%d" % port}},
            "sinks": {"hook": {"type": "webhook", "url": "http://127.0.0.1:%d/hook" % receiver.server_port}},
            "defaults": {"notify": ["hook"]},
            "rules": [{"id": "beat", "symbols": ["binance:BTC/USDT", "binance:ETH/USDT", "binance:SOL/USDT"],
                       "when": {"price": {"above": 0}}, "repeat": {"every": "1s"}}]
        }
        with open(os.path.join(folder, "rules.json"), "w") as f:
            json.dump(rules, f)
        env = dict(os.environ, PRICEALERT_STORE=url)
        logs = [open(os.path.join(folder, "run-%d.log" % n), "w") for n in range(2)]

        def start(slot):
            process = subprocess.Popen([binary, "run", "--rules", "rules.json", "--save-every", "1s"], cwd=folder,
                                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            children.append(process)
            return process, Lines(process, logs[slot])

        instances = [start(0)]
        instances[0][1].wait(LEADER_LINE)
        instances.append(start(1))
        # A standby that follows the feed (it evaluates what the leader does).
        for text in [STANDBY_LINE, "markets subscribed"]:
            instances[1][1].wait(text)
        leader = 0
        takeovers, deliveries = [], []
        for n in range(kills):
            time.sleep(rng.uniform(1.0, 3.0))
            standby = 1 - leader
            killed_at = time.monotonic()
            instances[leader][0].kill()
            instances[leader][0].wait()
            led = instances[standby][1].wait(LEADER_LINE, after=killed_at)
            delivered = first_arrival_after(killed_at)
            takeovers.append(led - killed_at)
            deliveries.append(delivered - killed_at)
            print("kill %2d: takeover %.3f s, first delivery %.3f s" % (n + 1, led - killed_at, delivered - killed_at),
                  flush=True)
            instances[leader] = start(leader)
            for text in [STANDBY_LINE, "markets subscribed"]:
                instances[leader][1].wait(text)
            leader = standby
        for name, values in [("takeover", takeovers), ("first delivery", deliveries)]:
            print("%s after SIGKILL over %d kills: median %.3f s, max %.3f s" % (
                name, len(values), statistics.median(values), max(values)))
        for process, _ in instances:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
    finally:
        for child in reversed(children):
            if child.poll() is None:
                child.send_signal(signal.SIGINT if child is children[0] else signal.SIGTERM)
                try:
                    child.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    child.kill()
        shutil.rmtree(folder, ignore_errors=True)


main()
