"""A PostgreSQL cluster of its own for the benchmarks (Debian's server programs, as the tests'
PostgresServer: initdb in a temporary folder, postgres on a free 127.0.0.1 port, as `nobody`
when run as root), and a child's stderr read line by line with the instant of each line.

As a program: starts one, runs COMMAND with PRICEALERT_STORE set to its URL, stops it.
usage: postgres.py COMMAND [ARGS...]
"""
import os, random, shutil, socket, subprocess, sys, tempfile, threading, time

PG = next((d for d in sorted(os.listdir("/usr/lib/postgresql"), reverse=True)), None) if os.path.isdir(
    "/usr/lib/postgresql") else None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lines:
    """A child's stderr lines with the instant each arrived, read on a thread of its own."""

    def __init__(self, process, log):
        self.lines, self.cond, self.log = [], threading.Condition(), log
        threading.Thread(target=self.read, args=(process.stderr,), daemon=True).start()

    def read(self, stream):
        for raw in stream:
            line = raw.decode("utf-8", "replace")
            self.log.write(line)
            self.log.flush()
            with self.cond:
                self.lines.append((time.monotonic(), line))
                self.cond.notify_all()

    def wait(self, text, after=0.0, timeout=120):
        """The instant of the first line containing `text` that arrived after `after`."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for at, line in self.lines:
                    if at >= after and text in line:
                        return at
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("no line with %r" % text)
                self.cond.wait(left)


def postgres(folder):
    """Starts a PostgreSQL cluster in `folder`; returns (process, store URL)."""
    if PG is None:
        sys.exit("PostgreSQL's server programs are not installed (apt-get install postgresql)")
    bin_dir = "/usr/lib/postgresql/%s/bin" % PG
    as_server = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"] if os.geteuid() == 0 else []
    pg_dir = os.path.join(folder, "pg")
    os.mkdir(pg_dir)
    superuser = "su-%d" % random.SystemRandom().getrandbits(64)
    password = "pa-%d" % random.SystemRandom().getrandbits(64)
    with open(os.path.join(pg_dir, "pw"), "w") as f:
        f.write(superuser)
    if os.geteuid() == 0:
        shutil.chown(folder, "nobody")
        os.chmod(folder, 0o755)
        for path in [pg_dir, os.path.join(pg_dir, "pw")]:
            shutil.chown(path, "nobody", "nogroup")
    subprocess.run(as_server + [bin_dir + "/initdb", "-D", pg_dir + "/data", "-U", "postgres", "--pwfile",
                                pg_dir + "/pw", "--auth", "scram-sha-256", "-E", "UTF8", "--locale", "C"],
                   check=True, stdout=subprocess.DEVNULL)
    port = free_port()
    server = subprocess.Popen(as_server + [bin_dir + "/postgres", "-D", pg_dir + "/data", "-h", "127.0.0.1", "-p",
                                           str(port), "-k", pg_dir], stderr=subprocess.PIPE)
    Lines(server, open(os.path.join(folder, "postgres.log"), "w")).wait("ready to accept connections")
    env = dict(os.environ, PGPASSWORD=superuser)
    for sql in ["CREATE ROLE pricealert LOGIN PASSWORD '%s'" % password, "CREATE DATABASE pricealert OWNER pricealert"]:
        subprocess.run([bin_dir + "/psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-d",
                        "postgres", "-c", sql], env=env, check=True)
    return server, "postgres://pricealert:%s@127.0.0.1:%d/pricealert?sslmode=disable" % (password, port)



if __name__ == "__main__":
    folder = tempfile.mkdtemp(prefix="pricealert-pg-")
    server = None
    try:
        server, url = postgres(folder)
        status = subprocess.run(sys.argv[1:], env=dict(os.environ, PRICEALERT_STORE=url)).returncode
    finally:
        if server is not None:
            server.send_signal(2)
            server.wait(timeout=60)
        shutil.rmtree(folder, ignore_errors=True)
    sys.exit(status)
