#!/usr/bin/env python3
"""Compares pricealert binaries on the figures of Benchmarks/run-check.sh (a cron `check` with
10 000 rules: wall time, peak RSS; `edit`: the same, each run after a one-byte edit of the rule
file, so that its rules cache misses and the file is checked in full) or
Benchmarks/run-daemon-memory.sh (the daemon's peak RSS with 100 000 rules), their runs
interleaved (A B A B ...) so that a machine whose speed drifts treats them alike. Each binary gets its own copy of the same generated inputs and fills its own
state folder first (the rules cache is valid for one binary only); the daemon runs start from a
fresh copy of that folder each time. Prints, per binary, the median and minimum of each figure
and the load average before and after.

usage: Benchmarks/Check/compare.py check|edit|daemon ROUNDS LABEL=BINARY [LABEL=BINARY ...]
       (check, edit: 10 000 rules; daemon: 100 000 rules, 15 s a run; RULES=N and DURATION=N override)
A BINARY may be preceded by environment settings for its runs: 'LABEL=NAME=VALUE BINARY'."""
import os, re, shutil, statistics, subprocess, sys, tempfile, time

mode, rounds = sys.argv[1], int(sys.argv[2])
pairs, settings = [], {}
for argument in sys.argv[3:]:
    label, words = argument.split("=", 1)[0], argument.split("=", 1)[1].split()
    pairs.append((label, words[-1]))
    settings[label] = dict(word.split("=", 1) for word in words[:-1])
if mode not in ("check", "edit", "daemon") or not pairs:
    sys.exit(__doc__)
repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
rules = int(os.environ.get("RULES", 100000 if mode == "daemon" else 10000))
seconds = int(os.environ.get("DURATION", 15))
work = tempfile.mkdtemp()


def load():
    return open("/proc/loadavg").read().split()[0:3]


def timed(command, cwd, extra):
    """Wall time (ms, fork to reaping) and peak RSS (KiB) of one run."""
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=cwd, env=dict(os.environ, **extra),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    return (time.perf_counter() - start) * 1000, usage.ru_maxrss


# Each binary runs as an installed copy (`install`, as README's Install section does): the
# linker's own output file in .build can map several MB more of its code (seen: 33 MB against
# 28.3 MB for a copy of the same bytes).
installed, sources = [], dict(pairs)
for label, binary in pairs:
    copy = os.path.join(work, f"{label}.bin")
    subprocess.run(["install", "-m", "0755", binary, copy], check=True)
    installed.append((label, copy))
pairs = installed

env = dict(os.environ, PRICEALERT_BENCH_NOW="1") if mode == "daemon" else os.environ
folders = {}
for label, binary in pairs:
    folder = os.path.join(work, label)
    os.makedirs(folder)
    subprocess.run(["python3", f"{repo}/Benchmarks/Check/generate.py", folder, str(rules),
                    str(0 if mode == "daemon" else rounds)], check=True, env=env, stdout=subprocess.DEVNULL)
    subprocess.run([os.path.abspath(binary), "check", "--rules", "rules.json", "--ticks", "day.jsonl",
                    "--markets", f"{repo}/Samples/btse-markets.json", "--state", "st"],
                   cwd=folder, check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, **settings[label]))
    folders[label] = folder

exchange, endpoint = None, None
if mode == "daemon":
    log = open(os.path.join(work, "exchange.log"), "w+")
    exchange = subprocess.Popen([os.path.abspath(pairs[0][1]), "exchange", "--port", "0", "--interval", "1s"],
                                stdout=subprocess.DEVNULL, stderr=log)
    while not endpoint:
        time.sleep(0.1)
        log.seek(0)
        found = re.search(r"listening on (http://127\.0\.0\.1:\d+)", log.read())
        endpoint = found and found.group(1)

results = {label: [] for label, _ in pairs}
print(f"{mode}: rules={rules} rounds={rounds} load before {' '.join(load())}", flush=True)
try:
    for n in range(rounds):
        for label, binary in pairs:
            folder = folders[label]
            if mode != "daemon":
                if mode == "edit":
                    with open(os.path.join(folder, "rules.json"), "a") as rules_file:
                        rules_file.write(" ")
                command = [os.path.abspath(binary), "check", "--rules", "rules.json", "--ticks",
                           f"snapshot{n}.jsonl", "--state", "st"]
            else:
                shutil.rmtree(os.path.join(folder, "run"), ignore_errors=True)
                shutil.copytree(os.path.join(folder, "st"), os.path.join(folder, "run"))
                command = [os.path.abspath(binary), "run", "--rules", "rules.json", "--source", "btse",
                           "--endpoint", endpoint, "--state", "run", "--duration", f"{seconds}s"]
            wall, rss = timed(command, folder, settings[label])
            results[label].append((wall, rss))
            print(f"  round {n} {label}: wall {wall:.1f} ms, peak RSS {rss} KiB", flush=True)
finally:
    if exchange:
        exchange.kill()
    shutil.rmtree(work, ignore_errors=True)
print(f"load after {' '.join(load())}")
for label, binary in pairs:
    walls, rsss = [r[0] for r in results[label]], [r[1] for r in results[label]]
    line = f"{label} ({' '.join(f'{k}={v}' for k, v in settings[label].items())} {sources[label]}): "
    if mode != "daemon":
        line += f"wall median {statistics.median(walls):.1f} ms, min {min(walls):.1f} ms; "
    line += f"peak RSS median {statistics.median(rsss):.0f} KiB, min {min(rsss)} KiB, max {max(rsss)} KiB"
    print(line)
