import AlertPostgres
import AlertTestSupport
import Foundation
import Testing

/// `--store postgres://…` and `pricealert store` as users run them: the built binary against a
/// real PostgreSQL server (`PostgresServer`).
@Suite("end to end: PostgreSQL store commands", .programs)
struct PostgresStoreCommandTests {
    /// A folder whose `check --ticks up.jsonl --state st` leaves one alert (`up:AAA:2000`)
    /// pending for the webhook `ops`, which nothing answers.
    func folderWithAPendingAlert() async throws -> URL {
        let durable = OutboxDurabilityTests()
        let dir = try durable.folder()
        let queued = try await durable.queue("up.jsonl", in: dir)
        #expect(queued.status == 74, "\(queued.stderr)")
        return dir
    }

    @Test func copyMovesTheOutboxAndSilencesOnceAndStatusCountsThem() async throws {
        let dir = try await folderWithAPendingAlert()
        defer { try? FileManager.default.removeItem(at: dir) }
        try await PostgresServer.with { server in
            let url = server.url()
            let silence = try await PriceAlertBinary.run(
                ["silence", "add", "--state", "st", "--rule", "down*", "--for", "2h", "--comment", "moving"], in: dir)
            #expect(silence.status == 0, "\(silence.stderr)")
            let id = silence.stdout.trimmingCharacters(in: .whitespacesAndNewlines)

            let copy = try await PriceAlertBinary.run(["store", "copy", "--from", "st", "--to", url], in: dir)
            #expect(copy.status == 0, "\(copy.stderr)")
            #expect(copy.stderr.contains("1 pending, 0 dead letters, 1 silences, 0 backfill ledger entries"))
            #expect(copy.stderr.contains("postgres://pricealert:***@127.0.0.1:\(server.port)/pricealert"))
            let again = try await PriceAlertBinary.run(["store", "copy", "--from", "st", "--to", url], in: dir)
            #expect(again.status == 0, "\(again.stderr)")
            #expect(again.stderr.contains("0 pending (1 there already), 0 dead letters, 0 silences (1 there already)"))

            let list = try await PriceAlertBinary.run(["outbox", "list", "--store", url, "--format", "json"], in: dir)
            #expect(list.status == 0, "\(list.stderr)")
            #expect(list.stdout.contains("\"state\":\"pending\",\"sink\":\"ops\",\"id\":\"up:AAA:2000\""))
            let fromFolder = try await PriceAlertBinary.run(
                ["outbox", "list", "--state", "st", "--format", "json"], in: dir)
            #expect(list.stdout == fromFolder.stdout)

            let silences = try await PriceAlertBinary.run(["silence", "list", "--store", url], in: dir)
            #expect(
                silences.status == 0 && silences.stdout.hasPrefix("\(id)  active  rule down*"), "\(silences.stderr)")

            let status = try await PriceAlertBinary.run(["store", "status", "--store", url], in: dir)
            #expect(status.status == 0, "\(status.stderr)")
            let schema = PostgresStore.schemaVersion
            #expect(status.stdout.contains("schema \(schema) (this pricealert knows \(schema))\n"))
            #expect(status.stdout.contains("connection not encrypted\n"))
            #expect(status.stdout.contains("outbox 1\ndead_letters 0\nalerts 1\nsilences 1\nbackfill_ledger 0\n"))

            let purge = try await PriceAlertBinary.run(["outbox", "purge", "--store", url, "--all"], in: dir)
            #expect(purge.status == 0 && purge.stderr == "outbox: 1 deleted\n", "\(purge.stderr)")
            for run in [silence, copy, again, list, silences, status, purge] {
                #expect(!(run.stdout + run.stderr).contains(server.password))
            }
        }
    }

    /// `outbox flush --store` delivers what a copied folder left pending, with its id, and
    /// leaves the store's outbox empty.
    @Test func flushDeliversWhatTheStoreHolds() async throws {
        let hook = OutboxDurabilityTests.Hook()
        try await OutboxDurabilityTests().withFolder(hook) { dir, port in
            let queued = try await OutboxDurabilityTests().queue("up.jsonl", in: dir)
            #expect(queued.status == 74, "\(queued.stderr)")
            try await PostgresServer.with { server in
                let url = server.url()
                let copy = try await PriceAlertBinary.run(["store", "copy", "--from", "st", "--to", url], in: dir)
                #expect(copy.status == 0, "\(copy.stderr)")
                let flush = try await PriceAlertBinary.run(
                    ["outbox", "flush", "--rules", "rules.json", "--store", url, "--timeout", "60s"], in: dir,
                    environment: ["HOOK_URL": "http://127.0.0.1:\(port)/hook"])
                #expect(flush.status == 0, "\(flush.stderr)")
                #expect(flush.stderr.contains("outbox: 1 delivered, 0 dead-lettered, 0 still pending"))
                #expect(hook.ids == ["up:AAA:2000"])
                let list = try await PriceAlertBinary.run(["outbox", "list", "--store", url], in: dir)
                #expect(list.stdout.hasPrefix("0 pending, 0 dead (postgres://pricealert:***@127.0.0.1:"))
                // The folder still holds its own row: the copy left it as it was.
                let folder = try await PriceAlertBinary.run(["outbox", "list", "--state", "st"], in: dir)
                #expect(folder.stdout.hasSuffix("1 pending, 0 dead (st)\n"))
            }
        }
    }

    @Test func silencesAddListAndExpireInTheStore() async throws {
        let dir = try await folderWithAPendingAlert()
        defer { try? FileManager.default.removeItem(at: dir) }
        try await PostgresServer.with { server in
            let url = server.url()
            let add = try await PriceAlertBinary.run(
                ["silence", "add", "--store", url, "--symbol", "btc-*", "--for", "1h"], in: dir)
            #expect(add.status == 0, "\(add.stderr)")
            let id = add.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let json = try await PriceAlertBinary.run(["silence", "list", "--store", url, "--format", "json"], in: dir)
            #expect(json.stdout.hasPrefix("{\"id\":\"\(id)\",\"state\":\"active\",\"rule\":\"*\",\"symbol\":\"BTC-*\""))
            let expire = try await PriceAlertBinary.run(["silence", "expire", "--store", url, id], in: dir)
            #expect(expire.status == 0 && expire.stderr.hasPrefix("silence \(id) expired at "), "\(expire.stderr)")
            let text = try await PriceAlertBinary.run(["silence", "list", "--store", url], in: dir)
            #expect(text.stdout.hasSuffix("0 in force, 1 in all\n"))
            let missing = try await PriceAlertBinary.run(["silence", "expire", "--store", url, "000000000000"], in: dir)
            #expect(missing.status == 64 && missing.stderr.contains("no silence \"000000000000\" in postgres://"))
            // The folder's silences are not the store's.
            let folder = try await PriceAlertBinary.run(["silence", "list", "--state", "st"], in: dir)
            #expect(folder.stdout == "0 in force, 0 in all\n")
        }
    }

    @Test func aStoreThatCannotBeUsedSaysWhyWithoutThePassword() async throws {
        let dir = try await folderWithAPendingAlert()
        defer { try? FileManager.default.removeItem(at: dir) }
        try await PostgresServer.with { server in
            let wrong = server.url(password: "not-" + server.password)
            let refused = try await PriceAlertBinary.run(["outbox", "list", "--store", wrong], in: dir)
            #expect(refused.status == 73)
            #expect(refused.stderr.contains("password authentication failed for user \"pricealert\""))
            #expect(refused.stderr.contains("postgres://pricealert:***@127.0.0.1"))
            #expect(!refused.stderr.contains(server.password))

            let both = try await PriceAlertBinary.run(
                ["silence", "list", "--state", "st", "--store", server.url()], in: dir)
            #expect(both.status == 64 && both.stderr == "pricealert: error: give --state or --store, not both\n")
            let bad = try await PriceAlertBinary.run(
                [
                    "store", "status", "--store",
                    "postgres://pricealert:\(server.password)@127.0.0.1/x?sslmode=sometimes"
                ],
                in: dir)
            #expect(bad.status == 64 && bad.stderr.contains("sslmode sometimes is not one of"))
            #expect(!bad.stderr.contains(server.password))
        }
    }

    /// A process started with a store URL names its command without the password, so a wait
    /// that times out (the test's own error) never prints it.
    @Test func aProcesssCommandLineHidesTheStorePassword() async throws {
        try await PostgresServer.with { server in
            let process = try PriceAlertBinary.start(
                ["store", "status", "--store", server.url()], in: FileManager.default.temporaryDirectory)
            defer { if process.process.isRunning { process.process.terminate() } }
            #expect(!process.command.contains(server.password), "\(process.command)")
            #expect(process.command.contains("postgres://pricealert:***@127.0.0.1:"), "\(process.command)")
            _ = try await process.stop(signal: SIGTERM)
        }
    }
}
