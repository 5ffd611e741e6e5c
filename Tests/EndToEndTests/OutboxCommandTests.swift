import AlertTestSupport
import Foundation
import Testing

/// `--state` and `pricealert outbox` as users run them: the built binary, a temporary folder.
@Suite("end to end: state folder and outbox commands", .programs)
struct OutboxCommandTests {
    func folder() throws -> URL {
        let dir = try DispatchTests().folder()
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("out"), withIntermediateDirectories: true)
        return dir
    }

    @Test func replayWithStateCreatesAPrivateFolderAndStillDeliversFileSinksDirectly() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try await PriceAlertBinary.run(
            [
                "replay", "--rules", "rules.json", "--ticks", "ticks.jsonl", "--format", "json",
                "--dispatch", "--state", "st/nested"
            ], in: dir)
        #expect(run.status == 0)
        let journal = try String(contentsOf: dir.appendingPathComponent("out/alerts.jsonl"), encoding: .utf8)
        #expect(journal == run.stdout)
        let state = dir.appendingPathComponent("st/nested").path
        let mode = try FileManager.default.attributesOfItem(atPath: state)[.posixPermissions] as? Int
        #expect(mode == 0o700)
        #expect(FileManager.default.fileExists(atPath: state + "/pricealert.sqlite"))

        let list = try await PriceAlertBinary.run(["outbox", "list", "--state", "st/nested"], in: dir)
        #expect(list.status == 0)
        #expect(list.stdout == "0 pending, 0 dead (st/nested)\n")
        let json = try await PriceAlertBinary.run(
            ["outbox", "list", "--state", "st/nested", "--format", "json"], in: dir)
        #expect(json.status == 0 && json.stdout.isEmpty)
    }

    @Test func stateWithoutDispatchIsAUsageError() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try await PriceAlertBinary.run(
            ["replay", "--rules", "rules.json", "--ticks", "ticks.jsonl", "--state", "st"], in: dir)
        #expect(run.status == 64)
        #expect(run.stderr.contains("--state is used with --dispatch"))
    }

    @Test func aLockedFolderIsRefusedNamingTheHolder() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let lock = try StateLockHolder(folder: dir.appendingPathComponent("st"))
        defer { lock.release() }

        let purge = try await PriceAlertBinary.run(["outbox", "purge", "--state", "st", "--dead"], in: dir)
        #expect(purge.status == 75)
        #expect(purge.stderr == "pricealert: error: st is in use by another pricealert (pid \(getpid()))\n")
        // Listing only reads: it goes ahead (here there is no database yet).
        let list = try await PriceAlertBinary.run(["outbox", "list", "--state", "st"], in: dir)
        #expect(list.status == 0 && list.stdout == "0 pending, 0 dead (st)\n")
        let replay = try await PriceAlertBinary.run(
            [
                "replay", "--rules", "rules.json", "--ticks", "ticks.jsonl", "--dispatch",
                "--state", "st"
            ], in: dir)
        #expect(replay.status == 75)
    }

    @Test func purgeNeedsOneOfDeadOrAll() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(try await PriceAlertBinary.run(["outbox", "purge", "--state", "st"], in: dir).status == 64)
        #expect(
            try await PriceAlertBinary.run(["outbox", "purge", "--state", "st", "--dead", "--all"], in: dir).status
                == 64)
        let purge = try await PriceAlertBinary.run(["outbox", "purge", "--state", "st", "--all"], in: dir)
        #expect(purge.status == 0 && purge.stderr == "outbox: 0 deleted\n")
    }

    @Test func flushWithNothingPendingExitsZero() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let flush = try await PriceAlertBinary.run(
            ["outbox", "flush", "--rules", "rules.json", "--state", "st", "--timeout", "2s"], in: dir)
        #expect(flush.status == 0)
        #expect(flush.stderr.contains("outbox: 0 delivered, 0 dead-lettered, 0 still pending"))
    }
}
