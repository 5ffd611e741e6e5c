public import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A real PostgreSQL server (Debian's `postgresql`, installed by `.ci/run`) for tests: a new
/// cluster made by `initdb` in a temporary folder, `postgres` on a free 127.0.0.1 port, never
/// the system's service, stopped and removed at the end.
///
/// PostgreSQL refuses to run as root, and tests run as root in CI: then the folder is given to
/// the system user `nobody` and both programs run as it (`setpriv --reuid --regid
/// --clear-groups`, from util-linux, on every Debian). As any other user they run as that user.
/// Logins use `scram-sha-256` passwords only: the superuser `postgres` and, for the code under
/// test, the role `pricealert`, which owns the database `pricealert` and nothing else.
public struct PostgresServer: Sendable {
    /// Where Debian's `postgresql-15` puts the server's programs.
    public static let binaries = URL(fileURLWithPath: "/usr/lib/postgresql/15/bin")

    public let port: Int
    /// The folder holding the cluster (`data`) and its socket.
    public let folder: URL
    /// The test role's password: random per server, so a test can look for it in what the code
    /// under test printed.
    public let password: String
    let superuserPassword: String
    /// The running `postgres` and how to start it again (`restart`).
    let running: Running

    final class Running: Sendable {
        let arguments: [String]
        let folder: URL
        let process: Mutex<ObservedProcess>

        init(arguments: [String], folder: URL, process: ObservedProcess) {
            self.arguments = arguments
            self.folder = folder
            self.process = Mutex(process)
        }
    }

    /// Stops the server (a fast shutdown: every session is ended, as when a database is restarted
    /// under its clients), waits until `down` returns, then starts it again on the same port and
    /// data, and returns once it accepts connections.
    public func restart(down: @Sendable () async throws -> Void = {}) async throws {
        let old = running.process.withLock { $0 }
        _ = try await old.stop(signal: SIGINT)
        try await down()
        let process = try ObservedProcess(Self.runner, running.arguments, in: running.folder)
        running.process.withLock { $0 = process }
        _ = try await process.line(.stderr, containing: "ready to accept connections", timeout: 120)
    }

    /// `postgres://pricealert:PASSWORD@HOST:PORT/DATABASE?sslmode=MODE`.
    public func url(
        database: String = "pricealert", sslMode: String = "disable", extra: String = "", host: String = "127.0.0.1"
    ) -> String {
        "postgres://pricealert:\(password)@\(host):\(port)/\(database)?sslmode=\(sslMode)\(extra)"
    }

    /// The same URL with `password` in place of the right one.
    public func url(password: String, database: String = "pricealert") -> String {
        "postgres://pricealert:\(password)@127.0.0.1:\(port)/\(database)?sslmode=disable"
    }

    public struct Missing: Error, CustomStringConvertible {
        public var description: String {
            """
            PostgreSQL's server programs are not at \(PostgresServer.binaries.path) (initdb, postgres, psql). \
            Install them with `apt-get install postgresql` (Debian 12's PostgreSQL 15; .ci/run does this), \
            then run the tests again.
            """
        }
    }

    public struct Failed: Error, CustomStringConvertible {
        public var step: String
        public var output: String
        public var description: String { "PostgreSQL test server: \(step) failed:\n\(output)" }
    }

    /// TLS for the server: its certificate and key (PEM files), served beside plain connections.
    public struct TLS: Sendable {
        public var certificate: String
        public var key: String
        public init(certificate: String, key: String) {
            self.certificate = certificate
            self.key = key
        }
    }

    /// Runs `body` with a fresh server that accepts logins, then stops it and removes its
    /// folder (also when `body` throws). Throws `Missing` when PostgreSQL is not installed.
    /// `durable`: with PostgreSQL's own settings (every commit flushed to disk, as in production:
    /// for benchmarks); otherwise without `fsync`, which tests do not need.
    public static func with<T: Sendable>(
        tls: TLS? = nil, durable: Bool = false, _ body: @Sendable (PostgresServer) async throws -> T
    ) async throws -> T {
        guard FileManager.default.isExecutableFile(atPath: binaries.appendingPathComponent("postgres").path) else {
            throw Missing()
        }
        let (template, superuserPassword) = try await Self.template.value
        // Under /tmp, not $TMPDIR: `nobody` must be able to reach the folder.
        let folder = URL(fileURLWithPath: "/tmp/pricealert-pg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        let password = randomSecret()
        var sslSettings: [String] = []
        if let tls {
            for (source, name) in [(tls.certificate, "server.pem"), (tls.key, "server.key")] {
                try FileManager.default.copyItem(atPath: source, toPath: folder.appendingPathComponent(name).path)
                chmod(folder.appendingPathComponent(name).path, 0o600)
            }
            sslSettings = [
                "-c", "ssl=on", "-c", "ssl_cert_file=\(folder.path)/server.pem",
                "-c", "ssl_key_file=\(folder.path)/server.key"
            ]
        }
        try giveToServerUser(folder)
        let data = folder.appendingPathComponent("data").path
        // A copy of the template cluster (`cp -a` keeps its owner and modes): initdb once per
        // test process, not once per server.
        let copy = try await ObservedProcess.run(URL(fileURLWithPath: "/bin/cp"), ["-a", template, data])
        guard copy.status == 0 else { throw Failed(step: "cp -a \(template)", output: copy.stderr) }
        // The port is free when asked and taken by the time postgres binds it only if another
        // program raced for it: then it ends at once and the next port is tried.
        var output = ""
        for _ in 0..<5 {
            let port = try AlertmanagerProcess.freePort()
            let arguments =
                asServerUser(binaries.appendingPathComponent("postgres").path) + [
                    "-D", data, "-h", "127.0.0.1", "-p", "\(port)", "-k", folder.path,
                    "-c", "log_min_messages=warning"
                ] + (durable ? [] : ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"])
                + sslSettings
            let process = try ObservedProcess(runner, arguments, in: folder)
            do {
                _ = try await process.line(.stderr, containing: "ready to accept connections", timeout: 120)
            } catch {
                output = process.stderr
                _ = try? await process.stop(signal: SIGTERM)
                continue
            }
            let server = PostgresServer(
                port: port, folder: folder, password: password, superuserPassword: superuserPassword,
                running: Running(arguments: arguments, folder: folder, process: process))
            let result: Result<T, any Error>
            do {
                try await server.psql(
                    "CREATE ROLE pricealert LOGIN PASSWORD '\(password)'", "CREATE DATABASE pricealert OWNER pricealert"
                )
                result = .success(try await body(server))
            } catch {
                result = .failure(error)
            }
            // SIGINT: PostgreSQL's fast shutdown (ends sessions, no checkpoint wait); SIGKILL when
            // that does not end it within 30 s (its backends end once they see the postmaster gone),
            // so no server outlives its test.
            let current = server.running.process.withLock { $0 }
            if (try? await current.stop(signal: SIGINT)) == nil {
                _ = try? await current.stop(signal: SIGKILL)
            }
            return try result.get()
        }
        throw Failed(step: "postgres", output: output)
    }

    /// The cluster every server starts from (`data` in a folder removed when the test process
    /// exits) and its superuser's password: made by initdb on first use.
    static let template = Task<(String, String), any Error> {
        let folder = URL(fileURLWithPath: templateFolder)
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        atexit { _ = try? FileManager.default.removeItem(atPath: PostgresServer.templateFolder) }
        let superuserPassword = randomSecret()
        let passwordFile = folder.appendingPathComponent("superuser-password")
        try superuserPassword.write(to: passwordFile, atomically: false, encoding: .utf8)
        try giveToServerUser(folder)
        let data = folder.appendingPathComponent("data").path
        let initdb = try await ObservedProcess.run(
            runner,
            asServerUser(binaries.appendingPathComponent("initdb").path) + [
                "-D", data, "-U", "postgres", "--pwfile", passwordFile.path, "--auth", "scram-sha-256",
                "-E", "UTF8", "--locale", "C", "--no-sync"
            ], in: folder, timeout: 600)
        guard initdb.status == 0 else { throw Failed(step: "initdb", output: initdb.stdout + initdb.stderr) }
        return (data, superuserPassword)
    }

    static let templateFolder = "/tmp/pricealert-pg-template-\(getpid())"

    /// A new database owned by `pricealert`, for a test that needs one of its own.
    public func createDatabase(_ name: String) async throws {
        try await psql("CREATE DATABASE \(name) OWNER pricealert")
    }

    /// Runs `statements` as the superuser, each in a transaction of its own (over TCP with its
    /// password, given to psql in its environment, never on its command line).
    public func psql(_ statements: String..., database: String = "postgres") async throws {
        try await psql(statements, database: database)
    }

    /// `psql(_:database:)` with the statements in an array; a `SET ROLE` among them holds for
    /// those after it (one session).
    public func psql(_ statements: [String], database: String = "postgres") async throws {
        let result = try await ObservedProcess.run(
            Self.binaries.appendingPathComponent("psql"),
            ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", "\(port)", "-U", "postgres", "-d", database]
                + statements.flatMap { ["-c", $0] },
            environment: ["PGPASSWORD": superuserPassword, "PATH": "/usr/bin:/bin"], timeout: 120)
        guard result.status == 0 else { throw Failed(step: "psql", output: result.stdout + result.stderr) }
    }

    /// Runs `sql` as the superuser and returns what it printed, one value per line (`-At`).
    public func query(_ sql: String, database: String = "pricealert") async throws -> String {
        let result = try await ObservedProcess.run(
            Self.binaries.appendingPathComponent("psql"),
            [
                "-X", "-At", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", "\(port)", "-U", "postgres", "-d",
                database, "-c", sql
            ],
            environment: ["PGPASSWORD": superuserPassword, "PATH": "/usr/bin:/bin"], timeout: 120)
        guard result.status == 0 else { throw Failed(step: "psql", output: result.stdout + result.stderr) }
        return result.stdout
    }

    /// Waits until `sql` (one boolean) is true, asking every 20 ms, at most `timeout`: for
    /// states the server shows and announces to no one (a lock waited for, a lease run out).
    public func waitUntil(_ sql: String, timeout: Duration = .seconds(90)) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await query(sql) != "t\n" {
            guard ContinuousClock.now < deadline else { throw NeverSaid(sql: sql) }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// `waitUntil`'s condition did not come true in time.
    public struct NeverSaid: Error, CustomStringConvertible {
        public var sql: String
        public var description: String { "the server never said \(sql)" }
    }

    static let isRoot = geteuid() == 0
    static let runner = URL(fileURLWithPath: isRoot ? "/usr/bin/setpriv" : "/usr/bin/env")

    /// The arguments that run `program` as the server's user.
    static func asServerUser(_ program: String) -> [String] {
        isRoot ? ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", program] : [program]
    }

    /// Gives `folder` and what it holds to `nobody` when running as root.
    static func giveToServerUser(_ folder: URL) throws {
        guard isRoot, let user = getpwnam("nobody") else { return }
        let uid = user.pointee.pw_uid, gid = user.pointee.pw_gid
        let items =
            [folder.path]
            + (try FileManager.default.contentsOfDirectory(atPath: folder.path))
            .map { folder.appendingPathComponent($0).path }
        for item in items where chown(item, uid, gid) != 0 {
            throw Failed(step: "chown \(item)", output: String(cString: strerror(errno)))
        }
        chmod(folder.path, 0o700)
    }

    /// Three random 32-bit numbers in hex, from the system generator.
    static func randomSecret() -> String {
        (0..<3).map { _ in String(UInt32.random(in: 0...UInt32.max), radix: 16) }.joined(separator: "x")
    }
}
