#!/usr/bin/env python3
"""Times `pricealert replay --format json` of a generated tick file into a file, for one or
more binaries, their runs interleaved (A B A B ...) so that a machine whose speed drifts treats
them alike. CPUS says where each run may run: a `taskset -c` list (default 0: one core;
CPUS=0,1: two cores) or CPUS=none (no pinning: every core the machine gives). Inputs come from
Benchmarks/Replay/generate.py (100 000 rules, 1 000 000 ticks, about 250 000 alerts; RULES=N
and TICKS=N override; INPUTS=DIR reuses a folder generated before). Prints each run, then per
binary the median and minimum wall time (fork to exit: the whole run, rule load included), the
ticks/s and alerts/s they mean, the CPU time (user + system; above the wall time when threads
run side by side), the peak resident memory, and the load average before and after. Ends with
whether every binary wrote the same bytes.

usage: Benchmarks/Replay/compare.py ROUNDS LABEL=BINARY [LABEL=BINARY ...]"""
import filecmp, os, re, statistics, subprocess, sys, tempfile, time

rounds = int(sys.argv[1])
pairs = [(a.split("=", 1)[0], os.path.abspath(a.split("=", 1)[1])) for a in sys.argv[2:]]
if not pairs:
    sys.exit(__doc__)
here = os.path.dirname(os.path.abspath(__file__))
rules, ticks = int(os.environ.get("RULES", 100_000)), int(os.environ.get("TICKS", 1_000_000))
cpus = os.environ.get("CPUS", os.environ.get("CPU", "0"))
pin = [] if cpus == "none" else ["taskset", "-c", cpus]
work = tempfile.mkdtemp()
inputs = os.environ.get("INPUTS")
if not inputs:
    inputs = work
    subprocess.run(["python3", os.path.join(here, "generate.py"), inputs, str(rules), str(ticks)], check=True)


def load():
    return " ".join(open("/proc/loadavg").read().split()[0:3])


def run(binary, out_path):
    """Wall time (s, fork to reaping), CPU time (s), peak RSS (KiB) and the alert count of one replay."""
    with open(out_path, "wb") as out, open(out_path + ".err", "wb") as err:
        start = time.perf_counter()
        child = subprocess.Popen(pin + [binary, "replay", "--format", "json",
                                  "--rules", "rules.json", "--ticks", "ticks.jsonl"],
                                 cwd=inputs, stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{binary} failed: {open(out_path + '.err').read()}")
    summary = open(out_path + ".err").read()
    alerts = int(re.search(r"(\d+) alerts?", summary).group(1))
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, alerts


results = {label: [] for label, _ in pairs}
print(f"replay --format json: rules={rules} ticks={ticks} rounds={rounds} cpus={cpus} load before {load()}", flush=True)
for n in range(rounds):
    for label, binary in pairs:
        wall, cpu_time, rss, alerts = run(binary, os.path.join(work, f"out-{label}.jsonl"))
        results[label].append((wall, cpu_time, rss, alerts))
        print(f"  round {n} {label}: wall {wall:.3f} s, cpu {cpu_time:.3f} s, {ticks / wall / 1e6:.2f} M ticks/s, "
              f"peak RSS {rss} KiB, {alerts} alerts", flush=True)
print(f"load after {load()}")
for label, binary in pairs:
    walls, cpu_times, rsses = ([r[k] for r in results[label]] for k in range(3))
    alerts = results[label][0][3]
    med, best = statistics.median(walls), min(walls)
    print(f"{label} ({binary}): wall median {med:.3f} s, min {best:.3f} s; whole-run ticks/s median "
          f"{ticks / med / 1e6:.2f} M, best {ticks / best / 1e6:.2f} M; alerts/s median {alerts / med / 1e6:.2f} M; "
          f"cpu median {statistics.median(cpu_times):.3f} s; peak RSS median {statistics.median(rsses):.0f} KiB; "
          f"{alerts} alerts")
first = os.path.join(work, f"out-{pairs[0][0]}.jsonl")
same = all(filecmp.cmp(first, os.path.join(work, f"out-{label}.jsonl"), shallow=False) for label, _ in pairs[1:])
print("outputs: " + ("identical" if same else "DIFFER"))
subprocess.run(["rm", "-rf", work])
