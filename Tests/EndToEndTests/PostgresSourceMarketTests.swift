import AlertTestSupport
import DemoExchange
import Foundation
import Testing

/// Each rule-file source's market list and known markets kept in a PostgreSQL store, as a state
/// folder keeps them in `markets-NAME.json` and `listings-NAME.txt`: the built binary, a real
/// PostgreSQL and look-alike exchanges.
@Suite("end to end: each source's market list in a PostgreSQL store", .programs)
struct PostgresSourceMarketTests {
    /// `run --store`, stopped after its first list; started again, its source's list now adds a
    /// market: the `listed` rule fires for it, as with a state folder.
    @Test func aMarketAddedWhileARunWasDownFiresListed() async throws {
        let (exchange, endpoint) = try await SourceMarketListTests.listingExchange()
        defer { Task { await exchange.stop() } }
        let dir = try SourceMarketListTests.folder(SourceMarketListTests.listedRules(endpoint: endpoint))
        defer { try? FileManager.default.removeItem(at: dir) }
        try await PostgresServer.with { server in
            let arguments = ["run", "--rules", "rules.json", "--store", server.url()]
            let first = try PriceAlertBinary.start(arguments, in: dir)
            defer { if first.process.isRunning { first.process.terminate() } }
            _ = try await first.waitForStderrLine(containing: "markets,", timeout: 60)
            // On a shared store a run keeps lists once it leads the home lease (its first source).
            _ = try await first.waitForStderrLine(containing: "source bt: taking over in epoch 1", timeout: 60)
            #expect(try await first.stop(signal: SIGTERM) == 0, "\(first.stderr)")
            #expect(!first.stdout.contains(#""condition":"listed""#), "the first list fires nothing: \(first.stdout)")
            #expect(try await server.query("SELECT source FROM source_listings") == "bt\n")
            #expect(try await server.query("SELECT source FROM source_market_lists") == "bt\n")

            let second = try PriceAlertBinary.start(arguments, in: dir)
            defer { if second.process.isRunning { second.process.terminate() } }
            let line = try await second.waitForStdoutLine(containing: #""condition":"listed""#, timeout: 60)
            #expect(line.contains(#""symbol":"NEWCOIN""#) && line.contains(#""source":"bt""#), "\(line)")
            #expect(try await second.stop(signal: SIGTERM) == 0, "\(second.stderr)")
        }
    }

    /// `run --store` keeps its source's list in the store; started again with that source's REST
    /// API down, it follows the kept list (said at warning) and its match rules apply.
    @Test func aSourceWhoseRESTIsDownFollowsTheListTheStoreKept() async throws {
        let dir = try SourceMarketListTests.folder("")
        defer { try? FileManager.default.removeItem(at: dir) }
        try await PostgresServer.with { server in
            try await SourceMarketListTests.runFollowsAKeptList(
                keeping: ["--store", server.url()], leading: "source bx: taking over in epoch 1", in: dir
            ) {
                try await server.query("SELECT source FROM source_market_lists") == "bx\n"
            }
        }
    }

    /// `check --store` keeps its source's list and known markets in the store: the next check,
    /// whose list adds a market, fires `listed` for it; `store copy` moves a state folder's
    /// per-source lists into a store.
    @Test func checkKeepsEachSourcesListsInTheStoreAndStoreCopyMovesThem() async throws {
        let (exchange, endpoint) = try await SourceMarketListTests.listingExchange()
        defer { Task { await exchange.stop() } }
        let dir = try SourceMarketListTests.folder(SourceMarketListTests.listedRules(endpoint: endpoint))
        defer { try? FileManager.default.removeItem(at: dir) }
        try await PostgresServer.with { server in
            let check = ["check", "--rules", "rules.json", "--store", server.url()]
            let first = try await PriceAlertBinary.run(check, in: dir)
            #expect(first.status == 0, "\(first.stderr)")
            #expect(first.stdout.isEmpty, "\(first.stdout)")
            _ = try await server.query("UPDATE check_runs SET began_at = began_at - 60000")
            let second = try await PriceAlertBinary.run(check, in: dir)
            #expect(second.status == 0, "\(second.stderr)")
            #expect(second.stdout.contains(#""symbol":"NEWCOIN""#), "\(second.stdout)")
            #expect(try await server.query("SELECT source FROM source_market_lists") == "bt\n")

            // A state folder's per-source lists, copied into a fresh store.
            let folderCheck = try await PriceAlertBinary.run(
                ["check", "--rules", "rules.json", "--state", "st"], in: dir)
            #expect(folderCheck.status == 0, "\(folderCheck.stderr)")
            try await server.createDatabase("copied")
            let target = server.url(database: "copied")
            let copy = try await PriceAlertBinary.run(["store", "copy", "--from", "st", "--to", target], in: dir)
            #expect(copy.status == 0, "\(copy.stderr)")
            #expect(try await server.query("SELECT source FROM source_market_lists", database: "copied") == "bt\n")
            #expect(try await server.query("SELECT source FROM source_listings", database: "copied") == "bt\n")
        }
    }
}
