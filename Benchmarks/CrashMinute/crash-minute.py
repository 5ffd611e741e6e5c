#!/usr/bin/env python3
"""Crash-minute benchmark: 500 alerts within one minute of event time, replayed with
`pricealert replay --dispatch` to one telegram-preset webhook sink (no `rate` key: the preset's
1 message/s applies), whose receiver on 127.0.0.1 enforces Telegram's one message per second
per chat: a message within 1 s of the last accepted one gets 429 with a `Retry-After` header
and Telegram's `{"parameters": {"retry_after": 1}}` body.

Reports the time from starting the replay until the receiver has accepted all 500 events, the
messages accepted, and the 429s. Python's standard library only: the receiver has to count
the events a chat message lists ("pricealert: N alerts, ..." or one event), nothing more.

    swift build --product pricealert      # or -c release, and --binary .build/release/pricealert
    python3 Benchmarks/CrashMinute/crash-minute.py [--binary .build/debug/pricealert] [--runs 3]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ALERTS = 500
HEADLINE = re.compile(r"^pricealert: (\d+) alerts")


class Chat:
    """What the receiver saw: accepted messages, the events they carried, refusals."""

    def __init__(self):
        self.lock = threading.Lock()
        self.last_accepted = None
        self.messages = 0
        self.refused = 0
        self.events = 0
        self.all_in = threading.Event()
        self.done_at = None


def handler(chat):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            now = time.monotonic()
            with chat.lock:
                if chat.last_accepted is not None and now - chat.last_accepted < 1.0:
                    chat.refused += 1
                    accepted = False
                else:
                    chat.last_accepted = now
                    chat.messages += 1
                    text = json.loads(body).get("text", "")
                    match = HEADLINE.match(text)
                    chat.events += int(match.group(1)) if match else 1
                    accepted = True
                    if chat.events >= ALERTS and chat.done_at is None:
                        chat.done_at = now
                        chat.all_in.set()
            if accepted:
                reply, status, headers = {"ok": True, "result": {}}, 200, {}
            else:
                reply = {"ok": False, "error_code": 429, "description": "Too Many Requests: retry after 1",
                         "parameters": {"retry_after": 1}}
                status, headers = 429, {"Retry-After": "1"}
            data = json.dumps(reply).encode()
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def write_inputs(folder, port):
    """500 rules crossing 1, 2, ... 500 and one BTC tick crossing each, 120 ms apart: 500
    alerts within one minute of event time."""
    rules = {
        "version": 1,
        "sinks": {"chat": {"type": "webhook", "preset": "telegram",
                           "url": f"http://127.0.0.1:{port}/bot123:TOKEN/sendMessage?chat_id=42"}},
        "rules": [{"id": f"crash-{i}", "symbol": "BTC", "when": {"price": {"crossesAbove": i}}, "notify": ["chat"]}
                  for i in range(1, ALERTS + 1)],
    }
    with open(os.path.join(folder, "rules.json"), "w") as f:
        json.dump(rules, f)
    start = 1_764_000_000_000
    with open(os.path.join(folder, "ticks.jsonl"), "w") as f:
        f.write(json.dumps({"time": start, "symbol": "BTC", "price": 0.5}) + "\n")
        for i in range(1, ALERTS + 1):
            f.write(json.dumps({"time": start + i * 120, "symbol": "BTC", "price": i + 0.5}) + "\n")


def run_once(binary):
    chat = Chat()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(chat))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    folder = tempfile.mkdtemp(prefix="crash-minute-")
    try:
        write_inputs(folder, server.server_address[1])
        started = time.monotonic()
        process = subprocess.Popen([binary, "replay", "--rules", "rules.json", "--ticks", "ticks.jsonl",
                                    "--dispatch", "--state", "state"], cwd=folder,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        chat.all_in.wait(timeout=120)
        _, stderr = process.communicate(timeout=120)
        if chat.done_at is None:
            raise SystemExit(f"only {chat.events} of {ALERTS} events arrived; exit {process.returncode}\n"
                             + stderr.decode()[-2000:])
        return chat.done_at - started, chat.messages, chat.refused, process.returncode
    finally:
        server.shutdown()
        shutil.rmtree(folder, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=".build/debug/pricealert")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    for run in range(1, args.runs + 1):
        seconds, messages, refused, status = run_once(binary)
        print(f"run {run}: all {ALERTS} events received after {seconds:.2f} s in {messages} messages "
              f"({refused} refused with 429), replay exit {status}")


if __name__ == "__main__":
    main()
