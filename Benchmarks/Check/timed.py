#!/usr/bin/env python3
"""One timed run for Benchmarks/run-check.sh: starts the command, waits for it and prints its
wall time (from just before the fork to the moment it is reaped), CPU time and peak RSS (from
the kernel's rusage of that one process). Timing it from the shell with `date` and GNU time
added their own process starts (~1.5 ms each here) to every run.

usage: timed.py LABEL RUNS_FILE COMMAND [ARGS...]
Prints "LABEL: wall W ms, cpu C ms, peak RSS R KiB", appends "W_us R_kib" to RUNS_FILE, and
exits with the command's status."""
import os, subprocess, sys, time

label, runs_file, command = sys.argv[1], sys.argv[2], sys.argv[3:]
start = time.perf_counter()
child = subprocess.Popen(command, stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
wall = time.perf_counter() - start
cpu = usage.ru_utime + usage.ru_stime
print("%s: wall %.3f ms, cpu %.1f ms, peak RSS %d KiB" % (label, wall * 1000, cpu * 1000, usage.ru_maxrss))
with open(runs_file, "a") as f:
    f.write("%d %d\n" % (wall * 1e6, usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
