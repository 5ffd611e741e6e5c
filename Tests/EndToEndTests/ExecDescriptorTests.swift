import AlertTestSupport
import Foundation
import Testing

/// What a notifier started by `run` inherits: nothing of pricealert's but its standard streams,
/// so a helper it leaves running holds no port of the daemon's.
extension LiveCommandTests {
    @Test func aNotifiersDetachedHelperHoldsNoSocketAndTheNextStartBinds() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let notifier = dir.appendingPathComponent("notify.sh").path
        // The helper leaves the notifier's process group (setsid), as a daemonising helper does,
        // with its standard streams on /dev/null: any other descriptor it has, it inherited. The
        // notifier ends only once the helper has left (its group is killed when it ends).
        try """
        #!/bin/sh
        setsid sh -c 'echo $$ > "$1/helper.tmp"; exec sleep 1000' helper "$1" </dev/null >/dev/null 2>&1 &
        while [ ! -s "$1/helper.tmp" ]; do sleep 0.01; done
        mv "$1/helper.tmp" "$1/helper"
        """.write(toFile: notifier, atomically: true, encoding: .utf8)
        #expect(chmod(notifier, 0o755) == 0)
        try """
        {"version": 1,
         "sinks": {"pager": {"type": "exec", "command": ["\(notifier)", "\(dir.path)"]}},
         "rules": [{"id": "btc-listed", "symbol": "BTC", "when": {"price": {"above": 1}}, "notify": ["pager"]}]}
        """.write(to: dir.appendingPathComponent("pager.json"), atomically: true, encoding: .utf8)
        try writeRules(in: dir)
        var helper: Int32?
        defer { if let helper { kill(helper, SIGKILL) } }

        let second = try await withExchange { port in
            let daemon = try PriceAlertBinary.start(
                [
                    "run", "--rules", "pager.json", "--source", "btse", "--endpoint", "http://127.0.0.1:\(port)",
                    "--state", "state", "--listen", "127.0.0.1:0"
                ], in: dir)
            let metricsPort = try await daemon.statusPort(timeout: 60)
            helper = try await Self.pid(in: dir.appendingPathComponent("helper"), timeout: .seconds(60))
            let pid = try #require(helper)
            let descriptors = Self.descriptors(of: pid)
            #expect(descriptors.map(\.fd) == [0, 1, 2], "the helper inherited \(descriptors)")
            #expect(!descriptors.contains { $0.target.hasPrefix("socket:") || $0.target.hasPrefix("anon_inode:") })
            #expect(try await daemon.stop(signal: SIGTERM) == 0)
            #expect(ChildProcesses.isRunning(pid), "the helper is detached: it outlives pricealert")

            // The same port again, while the helper still runs.
            let again = try await PriceAlertBinary.run(
                [
                    "run", "--rules", "rules.json", "--source", "btse", "--endpoint", "http://127.0.0.1:\(port)",
                    "--listen", "127.0.0.1:\(metricsPort)", "--duration", "1s"
                ], in: dir)
            // Before the exchange stops: a helper holding the feed's connection would keep it open.
            kill(pid, SIGKILL)
            return again
        }
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stderr.contains("listening on http://127.0.0.1:"))
    }

    /// The pid written to `file`, once it is there (the notifier writes it, then renames it).
    static func pid(in file: URL, timeout: Duration) async throws -> Int32 {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: timeout)
        while clock.now < end {
            if let text = try? String(contentsOf: file, encoding: .utf8),
                let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
            {
                return pid
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ObservedProcess.TimedOut(waitingFor: file.lastPathComponent, command: "notifier")
    }

    /// The open descriptors of `pid` and what each refers to, by number.
    static func descriptors(of pid: Int32) -> [(fd: Int, target: String)] {
        let folder = "/proc/\(pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.compactMap { name in
            guard let fd = Int(name) else { return nil }
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\(name)")) ?? "?"
            return (fd, target)
        }.sorted { $0.fd < $1.fd }
    }
}
