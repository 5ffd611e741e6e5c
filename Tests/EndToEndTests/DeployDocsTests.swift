import AlertTestSupport
import Foundation
import Hummingbird
import Synchronization
import Testing

/// Docs/deploy.md's setups as written: the systemd unit passes `systemd-analyze verify`, the
/// crontab line runs under cron's environment (`PATH=/usr/bin:/bin`, nothing of a login) with
/// the binary and files where the docs put them, and README.md, the unit and the crontab line
/// install and call one binary. The unit and the line are read out of the doc, so the doc and
/// what is tested cannot drift; only the install prefix of absolute paths is moved into a
/// temporary root, and `--source btse` gets the local exchange's `--endpoint`.
extension DocsCommandsTests {
    /// Where README.md and Docs/deploy.md install the binary.
    static let installedBinary = "/usr/local/bin/pricealert"

    /// The lines of every fenced block of `language` in `file`, each block with its first line.
    static func blocks(_ language: String, in file: String) throws -> [(line: Int, text: [String])] {
        let markdown = try String(contentsOf: repo.appendingPathComponent(file), encoding: .utf8)
        var found: [(line: Int, text: [String])] = []
        var open: (line: Int, language: String, text: [String])?
        for (index, raw) in markdown.components(separatedBy: "\n").enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("```") {
                if let block = open {
                    if block.language == language { found.append((block.line, block.text)) }
                    open = nil
                } else {
                    open = (index + 2, String(line.dropFirst(3)), [])
                }
            } else if open != nil {
                open?.text.append(raw)
            }
        }
        return found
    }

    /// deploy.md's unit file.
    static func documentedUnit() throws -> [String] {
        let units = try blocks("ini", in: "Docs/deploy.md").filter { $0.text.contains("[Service]") }
        try #require(units.count == 1, "Docs/deploy.md shows \(units.count) units")
        return units[0].text
    }

    /// deploy.md's crontab line: variable assignments, then the schedule, the user and the command.
    static func documentedCrontab() throws -> (variables: [String: String], user: String, command: String) {
        let tables = try blocks("cron", in: "Docs/deploy.md")
        try #require(tables.count == 1, "Docs/deploy.md shows \(tables.count) crontabs")
        var variables: [String: String] = [:]
        var entries: [(user: String, command: String)] = []
        for line in tables[0].text.map({ $0.trimmingCharacters(in: .whitespaces) })
        where !line.isEmpty && !line.hasPrefix("#") {
            let fields = line.split(separator: " ", maxSplits: 6, omittingEmptySubsequences: true).map(String.init)
            if fields.count == 1, let equals = line.firstIndex(of: "=") {
                variables[String(line[..<equals])] = String(line[line.index(after: equals)...])
            } else {
                try #require(fields.count == 7, "'\(line)' is not 'm h dom mon dow user command' (/etc/cron.d)")
                entries.append((fields[5], fields[6].trimmingCharacters(in: .whitespaces)))
            }
        }
        try #require(entries.count == 1)
        return (variables, entries[0].user, entries[0].command)
    }

    @Test func theDocumentedUnitPassesSystemdAnalyzeVerify() async throws {
        let analyze = URL(fileURLWithPath: "/usr/bin/systemd-analyze")
        try #require(
            FileManager.default.isExecutableFile(atPath: analyze.path),
            "systemd-analyze is missing: scripts/bootstrap installs it (Debian package systemd)")
        let unit = try Self.documentedUnit()
        let execStart = try #require(unit.first { $0.hasPrefix("ExecStart=") })
        #expect(
            execStart.hasPrefix("ExecStart=\(Self.installedBinary) "),
            "\(execStart) does not start the installed binary")
        let dir = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        // verify checks that ExecStart's program exists: the built one stands in for the installed one.
        let text = unit.joined(separator: "\n").replacingOccurrences(
            of: "ExecStart=\(Self.installedBinary) ",
            with: "ExecStart=\(PriceAlertBinary.url.path) ")
        let file = dir.appendingPathComponent("pricealert.service")
        try text.write(to: file, atomically: true, encoding: .utf8)
        let result = try await ObservedProcess.run(analyze, ["verify", file.path], timeout: 120)
        #expect(result.status == 0, "systemd-analyze verify: \(result.stderr)")
        #expect(
            result.stderr.isEmpty && result.stdout.isEmpty, "systemd-analyze verify: \(result.stdout)\(result.stderr)")
    }

    /// The line, as cron runs it: `/bin/sh -c LINE` with cron's environment, the binary, rule
    /// file and secrets file where the docs put them (under a temporary root). A webhook whose URL
    /// comes from the secrets file gets the alert, and nothing is printed, so cron mails nothing.
    @Test func theDocumentedCrontabLineRunsUnderCronsEnvironment() async throws {
        let crontab = try Self.documentedCrontab()
        #expect(crontab.user == "root")
        let root = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let files = FileManager.default
        // The absolute paths of the line: the binary, the rules, the secrets, the state folder.
        let paths = crontab.command.split(separator: " ").map(String.init).filter { $0.hasPrefix("/") }
        #expect(
            paths.contains(Self.installedBinary),
            "the crontab line does not run \(Self.installedBinary) by its full path")
        try #require(
            paths.allSatisfy { ["/usr/local/", "/etc/pricealert/", "/var/lib/"].contains(where: $0.hasPrefix) },
            "paths outside what this test can put under a temporary root: \(paths)")
        for folder in ["usr/local/bin", "etc/pricealert", "var/lib", "home"] {
            try files.createDirectory(at: root.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        try files.createSymbolicLink(
            atPath: root.path + Self.installedBinary, withDestinationPath: PriceAlertBinary.url.path)
        let rules = try #require(paths.first { $0.hasPrefix("/etc/pricealert/") && $0.hasSuffix(".json") })
        try #"""
        {"version": 1,
         "sinks": {"ops-hook": {"type": "webhook", "urlEnv": "OPS_HOOK_URL", "secretEnv": "OPS_HOOK_SECRET"}},
         "rules": [{"id": "cron-btc", "symbol": "BTC", "when": {"price": {"above": 1}}, "notify": ["ops-hook"]}]}
        """#.write(toFile: root.path + rules, atomically: true, encoding: .utf8)

        let exchange = try PriceAlertBinary.start(["exchange", "--port", "0"])
        let listening = try await exchange.waitForStderrLine(containing: "listening on http://127.0.0.1:", timeout: 60)
        let address = try #require(listening.range(of: "http://127.0.0.1:"))
        let port = try #require(Int(listening[address.upperBound...].prefix { $0.isNumber }))
        let received = Mutex<[String]>([])
        let router = Router()
        router.post("/hook") { request, _ in
            received.withLock { $0.append(request.uri.description) }
            return HTTPResponse.Status.ok
        }
        try await LoopbackServer.with(router) { hookPort in
            // As deploy.md tells: one NAME='value' a line, the URL's & inside the quotes; 0600.
            let secrets = try #require(
                paths.first { $0.hasPrefix("/etc/pricealert/") && $0.hasSuffix(".env") },
                "the crontab line reads no secrets file")
            try
                "OPS_HOOK_URL='http://127.0.0.1:\(hookPort)/hook?token=cron-test&channel=ops'\nOPS_HOOK_SECRET='cron-test-key'\n"
                .write(toFile: root.path + secrets, atomically: true, encoding: .utf8)
            try files.setAttributes([.posixPermissions: 0o600], ofItemAtPath: root.path + secrets)

            var line = crontab.command.replacingOccurrences(
                of: "--source btse", with: "--source btse --endpoint http://127.0.0.1:\(port)")
            line = line.split(separator: " ").map { $0.hasPrefix("/") ? root.path + $0 : String($0) }.joined(
                separator: " ")
            var environment = [
                "PATH": "/usr/bin:/bin", "SHELL": "/bin/sh", "HOME": root.path + "/home",
                "LOGNAME": crontab.user, "USER": crontab.user
            ]
            for (name, value) in crontab.variables { environment[name] = value }
            let shell = URL(fileURLWithPath: environment["SHELL"] ?? "/bin/sh")
            let result = try await ObservedProcess.run(
                shell, ["-c", line], in: root.appendingPathComponent("home"),
                environment: environment, timeout: 120)
            #expect(result.status == 0, "\(line)\nstdout: \(result.stdout)\nstderr: \(result.stderr)")
            #expect(result.stdout.isEmpty && result.stderr.isEmpty, "cron would mail: \(result.stdout)\(result.stderr)")
            #expect(received.withLock { $0 } == ["/hook?token=cron-test&channel=ops"])
        }
        #expect(try await exchange.stop(signal: SIGTERM) == 0)
        let state = try #require(paths.first { $0.hasPrefix("/var/lib/") })
        #expect(
            !state.hasPrefix("/var/lib/pricealert/") && state != "/var/lib/pricealert",
            "the cron state folder is inside the daemon's StateDirectory")
        let mode = try files.attributesOfItem(atPath: root.path + state)[.posixPermissions] as? Int
        #expect(mode == 0o700)
    }

    /// README.md installs where the unit and the crontab line call, in a folder on root's PATH.
    @Test func theReadmeTheUnitAndTheCrontabUseOneInstalledBinary() throws {
        let readme = try String(contentsOf: Self.repo.appendingPathComponent("README.md"), encoding: .utf8)
        let installs = readme.components(separatedBy: "\n").filter {
            $0.contains("install ") && $0.contains(".build/release/pricealert")
        }
        #expect(!installs.isEmpty)
        for line in installs { #expect(line.hasSuffix(" \(Self.installedBinary)"), "README.md: '\(line)'") }
        // Debian's default PATH of root (login.defs ENV_SUPATH) and of every user (ENV_PATH).
        let folder = (Self.installedBinary as NSString).deletingLastPathComponent
        #expect(
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".split(separator: ":").contains(
                Substring(folder)))
        #expect(
            "/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games".split(separator: ":").contains(Substring(folder))
        )
        let unit = try Self.documentedUnit()
        #expect(unit.contains { $0.hasPrefix("ExecStart=\(Self.installedBinary) ") })
        #expect(try Self.documentedCrontab().command.contains(" \(Self.installedBinary) "))
    }

    static func scratchFolder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pricealert-deploy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }
}
