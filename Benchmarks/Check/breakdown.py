#!/usr/bin/env python3
"""What the peak resident memory of a `check` (10 000 rules) or of the daemon (100 000 rules, 15 s)
is made of, on the inputs of compare.py: one run, its /proc/PID/smaps read each time its VmRSS
reaches a new high (polled every 2 ms), and that snapshot summed by what is mapped: the
executable, the Swift runtime, Foundation, SQLite, libcurl with the libraries it loads, the C
and C++ runtime, the heap and other anonymous memory. Per group: code (executable pages),
read-only data, and data the process wrote (relocated pointers, writable data, the heap).
Prints the table in Markdown, with VmHWM beside the snapshot's RSS (the snapshot is the last
new high the poll saw; the kernel's peak may be a little higher).

With MODULES=1 it also sorts the executable's resident pages (code and read-only data) by the
module their symbols come from (`nm`; a page counts for the symbol at its start).

usage: Benchmarks/Check/breakdown.py check|daemon BINARY   (RULES=N and DURATION=N override)"""
import bisect, os, re, shutil, struct, subprocess, sys, tempfile, time

if len(sys.argv) != 3 or sys.argv[1] not in ("check", "daemon"):
    sys.exit(__doc__)
mode, binary = sys.argv[1], os.path.abspath(sys.argv[2])
repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
rules = int(os.environ.get("RULES", 10000 if mode == "check" else 100000))
seconds = int(os.environ.get("DURATION", 15))
work = tempfile.mkdtemp()

SWIFT = ("libswiftCore", "libswift_", "libswiftSynchronization", "libswiftGlibc", "libswiftDispatch",
         "libdispatch", "libBlocksRuntime")
FOUNDATION = ("libFoundation", "lib_FoundationICU")
C_RUNTIME = ("libc.so", "libm.so", "libstdc++", "libgcc_s", "ld-linux")


def group(path):
    """The group a mapping's path belongs to."""
    name = os.path.basename(path)
    if not path:
        return "heap and other anonymous memory"
    if path in ("[heap]",):
        return "heap and other anonymous memory"
    if path.startswith("[stack"):
        return "main thread's stack"
    if path.startswith("["):
        return "kernel ([vdso], [vvar])"
    if path == binary:
        return "the executable"
    if name.startswith(SWIFT):
        return "Swift runtime (libswiftCore, Concurrency, Dispatch, ...)"
    if name.startswith(FOUNDATION):
        return "Foundation (libFoundation, Essentials, Internationalization, ICU)"
    if name.startswith("libsqlite3"):
        return "SQLite (libsqlite3)"
    if name.startswith(C_RUNTIME):
        return "C and C++ runtime (libc, libm, libstdc++, ld.so)"
    if name.endswith("-shm") or name.endswith("-wal") or name.endswith(".sqlite"):
        return "SQLite's shared WAL index (-shm)"
    if ".so" in name:
        return "libcurl and the libraries it loads (TLS, Kerberos, LDAP, ...)"
    return "other files: " + name


def snapshot(pid):
    """Per group: [code, read-only data, written data, resident] in KiB, from /proc/PID/smaps.
    Pages of a read-only file mapping that the process wrote (relocated pointers after RELRO)
    count as written data."""
    totals = {}
    mappings = []
    for line in open(f"/proc/{pid}/smaps"):
        head = re.match(r"^[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ \S+\s*(.*)$", line)
        if head:
            path = head.group(2).strip()
            mappings.append({"perms": head.group(1), "path": path, "Rss": 0, "Private_Dirty": 0})
            continue
        key, _, value = line.partition(":")
        if key in ("Rss", "Private_Dirty") and mappings:
            mappings[-1][key] = int(value.split()[0])
    pages = executable_pages(pid, mappings) if os.environ.get("MODULES") == "1" else []
    for m in mappings:
        row = totals.setdefault(group(m["path"]), [0, 0, 0, 0])
        rss, dirty = m["Rss"], m["Private_Dirty"]
        file_backed = bool(m["path"]) and not m["path"].startswith("[")
        if not file_backed or "w" in m["perms"]:
            row[2] += rss
        else:
            row[0 if "x" in m["perms"] else 1] += rss - dirty
            row[2] += dirty
        row[3] += rss
    return totals, pages


def executable_pages(pid, mappings):
    """Addresses (as in the file's symbol table) of the executable's resident read-only pages."""
    ranges = []
    with open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 6 and fields[5] == binary:
                low, high = (int(x, 16) for x in fields[0].split("-"))
                ranges.append((low, high, int(fields[2], 16), fields[1]))
    if not ranges:
        return []
    base = ranges[0][0] - ranges[0][2]
    present = []
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        for low, high, _, perms in ranges:
            if "w" in perms:
                continue
            pagemap.seek(low // 4096 * 8)
            data = pagemap.read((high - low) // 4096 * 8)
            for i in range(len(data) // 8):
                if struct.unpack_from("<Q", data, i * 8)[0] >> 63:
                    present.append(low - base + i * 4096)
    return present


def module(symbol):
    """The module a symbol's name says it comes from."""
    found = re.match(r"_?\$s(\d+)", symbol)
    if found:
        n = int(found.group(1))
        start = found.end()
        name = symbol[start:start + n]
        return "Swift: " + name
    for prefix, name in (("CNIOBoringSSL", "C: BoringSSL (swift-nio-ssl)"), ("CCryptoBoringSSL", "C: BoringSSL (swift-crypto)"),
                         ("_ZN6icu_", "C++: ICU"), ("u_", "C++: ICU"), ("ucol", "C++: ICU"), ("_CF", "C: CoreFoundation"),
                         ("CF", "C: CoreFoundation"), ("__CF", "C: CoreFoundation"), ("swift_", "Swift runtime (C++)"),
                         ("_ZN5swift", "Swift runtime (C++)"), ("_ZN", "C++: other"), ("sqlite3", "C: SQLite")):
        if symbol.startswith(prefix):
            return name
    return "other (C, tables)"


def by_module(pages):
    """KiB of `pages` per module, largest first."""
    listing = subprocess.run(["nm", "--defined-only", "-n", binary], capture_output=True, text=True).stdout
    starts, names = [], []
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] in "TtRrVvWw":
            starts.append(int(fields[0], 16))
            names.append(fields[2])
    sections = []
    for line in subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True).stdout.splitlines():
        found = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if found and int(found.group(2), 16):
            sections.append((int(found.group(2), 16), int(found.group(3), 16), found.group(1)))
    sizes = {}
    for page in pages:
        section = next((name for low, size, name in sections if low <= page < low + size), "")
        if section == ".text":
            i = bisect.bisect_right(starts, page) - 1
            name = module(names[i]) if i >= 0 else "code before the first symbol"
        elif section.startswith("swift5_"):
            name = "Swift metadata (swift5_* sections)"
        elif section in (".dynsym", ".dynstr", ".gnu.hash", ".gnu.version", ".rela.dyn", ".rela.plt"):
            name = "dynamic symbols and relocations (" + section + ")"
        else:
            name = section or "between sections"
        sizes[name] = sizes.get(name, 0) + 4
    return sorted(sizes.items(), key=lambda item: -item[1])


def status(pid, key):
    found = re.search(key + r":\s+(\d+)", open(f"/proc/{pid}/status").read())
    return int(found.group(1)) if found else 0


def watch(command, cwd):
    """Runs `command`; returns (smaps summary at the highest VmRSS seen, that VmRSS, VmHWM)."""
    child = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    best, best_rss, hwm = ({}, []), 0, 0
    while child.poll() is None:
        try:
            rss = status(child.pid, "VmRSS")
            hwm = max(hwm, status(child.pid, "VmHWM"))
            if rss > best_rss:
                best, best_rss = snapshot(child.pid), rss
        except (FileNotFoundError, ProcessLookupError, ValueError):
            break
        time.sleep(0.002)
    child.wait()
    return best, best_rss, hwm


env = dict(os.environ, PRICEALERT_BENCH_NOW="1") if mode == "daemon" else os.environ
exchange = None
try:
    subprocess.run(["python3", f"{repo}/Benchmarks/Check/generate.py", work, str(rules),
                    "1" if mode == "check" else "0"], check=True, env=env, stdout=subprocess.DEVNULL)
    subprocess.run([binary, "check", "--rules", "rules.json", "--ticks", "day.jsonl",
                    "--markets", f"{repo}/Samples/btse-markets.json", "--state", "st"],
                   cwd=work, check=True, stdout=subprocess.DEVNULL)
    if mode == "check":
        command = [binary, "check", "--rules", "rules.json", "--ticks", "snapshot0.jsonl", "--state", "st"]
    else:
        log = open(os.path.join(work, "exchange.log"), "w+")
        exchange = subprocess.Popen([binary, "exchange", "--port", "0", "--interval", "1s"],
                                    stdout=subprocess.DEVNULL, stderr=log)
        endpoint = None
        while not endpoint:
            time.sleep(0.1)
            log.seek(0)
            found = re.search(r"listening on (http://127\.0\.0\.1:\d+)", log.read())
            endpoint = found and found.group(1)
        command = [binary, "run", "--rules", "rules.json", "--source", "btse", "--endpoint", endpoint,
                   "--state", "st", "--duration", f"{seconds}s"]
    (summary, pages), rss, hwm = watch(command, work)
finally:
    if exchange:
        exchange.kill()
    shutil.rmtree(work, ignore_errors=True)

print(f"{mode}, {rules} rules, {binary}: snapshot at VmRSS {rss} KiB (VmHWM {hwm} KiB)\n")
print("| mapped | code | read-only data | written data | resident |")
print("|---|---:|---:|---:|---:|")


def kib(n):
    return f"{n:,}".replace(",", " ")


column = [0, 0, 0, 0]
for name, row in sorted(summary.items(), key=lambda item: -item[1][3]):
    column = [a + b for a, b in zip(column, row)]
    print(f"| {name} | " + " | ".join(kib(n) for n in row) + " |")
print("| all (KiB) | " + " | ".join(kib(n) for n in column) + " |")
if pages:
    print("\n| the executable's resident read-only pages, by module | KiB |")
    print("|---|---:|")
    for name, size in by_module(pages)[:20]:
        print(f"| {name} | {kib(size)} |")
