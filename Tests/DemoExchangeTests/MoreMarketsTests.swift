import AlertFeeds
import AlertHTTP
import AlertModel
import AlertTestSupport
import DemoExchange
import Foundation
import Logging
import Synchronization
import Testing

/// `--markets N` (`ExchangeConfiguration.marketsPerVenue`): every look-alike lists N spot
/// markets, read by pricealert's own clients (the market list, the 24-hour snapshot, and the
/// ticker websocket subscribed in the exchange's batches), and BTSE's routes are unchanged.
@Suite("look-alikes with more markets")
struct MoreMarketsTests {
    static let perVenue = 600

    static func configuration() -> ExchangeConfiguration {
        ExchangeConfiguration(
            port: 0, prices: .randomWalk(seed: 3, interval: .seconds(1)), marketsPerVenue: perVenue)
    }

    static let profiles: [(name: String, profile: ExchangeProfile)] = [
        ("binance", .binance), ("coinbase", .coinbase), ("kraken", .kraken), ("bybit", .bybit), ("okx", .okx)
    ]

    @Test("each look-alike lists N markets, the same coins everywhere, and serves a 24-hour ticker for each")
    func listsAndSnapshots() async throws {
        let bases = try await withExchange(Self.configuration()) { _, port in
            var basesByVenue: [String: Set<String>] = [:]
            for (name, profile) in Self.profiles {
                let source = ExchangeSource(profile, endpoint: "http://127.0.0.1:\(port)/\(name)")
                let markets = try await source.loadMarkets(http: PatientHTTPClient(NIOHTTPClient()))
                #expect(markets.count == Self.perVenue, "\(name)")
                #expect(Set(markets.map(\.symbol)).count == Self.perVenue, "\(name): symbols repeat")
                let quote = ["binance", "bybit", "okx"].contains(name) ? "USDT" : "USD"
                #expect(markets.allSatisfy { $0.quote == quote && $0.symbol == "\($0.base)/\(quote)" }, "\(name)")
                #expect(
                    markets.allSatisfy { $0.base.allSatisfy { ($0.isUppercase || $0.isNumber) && $0.isASCII } },
                    "\(name)")
                #expect(markets.contains { $0.symbol == "BTC/\(quote)" }, "\(name): the demo's markets come first")
                let ticks = try await source.snapshot(http: PatientHTTPClient(NIOHTTPClient()))
                #expect(Set(ticks.map(\.symbol)) == Set(markets.map(\.symbol)), "\(name): a ticker per market")
                #expect(ticks.allSatisfy { $0.price > 0 }, "\(name)")
                basesByVenue[name] = Set(markets.map(\.base))
            }
            // BTSE's list and frames keep the demo's markets.
            let summary = try await get(port, "/spot/api/v3.2/market_summary")
            #expect((try JSONSerialization.jsonObject(with: summary.body) as? [Any])?.count == 156)
            return basesByVenue
        }
        // The same synthetic coins on every look-alike: the USDT-quoted ones list one more (they
        // do not list USDT itself, and fill its place).
        let usdt = try #require(bases["binance"]), usd = try #require(bases["coinbase"])
        #expect(bases["bybit"] == usdt && bases["okx"] == usdt && bases["kraken"] == usd)
        #expect(usd.subtracting(["USDT"]).isSubset(of: usdt))
        #expect(usdt.subtracting(usd).count == 1)
        // The same names on every run.
        let again = try await withExchange(Self.configuration()) { _, port in
            try await ExchangeSource(.okx, endpoint: "http://127.0.0.1:\(port)/okx").loadMarkets(
                http: PatientHTTPClient(NIOHTTPClient()))
        }
        #expect(Set(again.map(\.base)) == bases["okx"])
    }

    @Test("pricealert's feed of each look-alike subscribes every one of its N markets and gets prices for all")
    func streamsEveryMarket() async throws {
        try await withExchange(Self.configuration()) { _, port in
            try await withThrowingTaskGroup(of: (String, Int, Int, [String]).self) { group in
                for (name, profile) in Self.profiles {
                    group.addTask {
                        let runner = FeedRunner(
                            source: ExchangeSource(profile, endpoint: "http://127.0.0.1:\(port)/\(name)"),
                            http: NIOHTTPClient(), logger: Logger(label: "test"))
                        let (events, task) = runner.start()
                        defer { task.cancel() }
                        var listed = 0
                        var priced = Set<String>()
                        var connected: [String] = []
                        for await event in events {
                            switch event {
                            case .markets(let markets): listed = markets.count
                            case .connected(let url): connected.append(url)
                            case .ticks(let ticks): priced.formUnion(ticks.map(\.symbol))
                            default: break
                            }
                            if listed > 0, priced.count == listed { break }
                        }
                        return (name, listed, priced.count, connected)
                    }
                }
                for try await (name, listed, priced, connected) in group {
                    #expect(listed == Self.perVenue, "\(name)")
                    // The feed's `connected` line (logged by `run`) says how many markets it subscribed.
                    #expect(
                        connected.first?.hasSuffix(": \(Self.perVenue) markets subscribed") == true,
                        "\(name): \(connected)")
                    #expect(priced == Self.perVenue, "\(name): prices for \(priced) of \(listed) markets")
                }
            }
        }
    }

    @Test("Coinbase: a subscribe of more markets than 8 messages hold keeps to 8 messages a second")
    func coinbaseSubscribesWithinItsMessageRate() async throws {
        // 1 000 markets: the heartbeats message and 10 ticker messages of 100 product ids.
        let configuration = ExchangeConfiguration(
            port: 0, prices: .randomWalk(seed: 3, interval: .seconds(1)), marketsPerVenue: 1_000)
        try await withExchange(configuration) { _, port in
            let runner = FeedRunner(
                source: ExchangeSource(.coinbase, endpoint: "http://127.0.0.1:\(port)/coinbase"),
                http: NIOHTTPClient(), logger: Logger(label: "test"))
            let (events, task) = runner.start()
            defer { task.cancel() }
            var listed = 0
            var priced = Set<String>()
            var closed: String?
            for await event in events {
                switch event {
                case .markets(let markets): listed = markets.count
                case .ticks(let ticks): priced.formUnion(ticks.map(\.symbol))
                case .disconnected(let reason, _): closed = reason
                default: break
                }
                if closed != nil || (listed > 0 && priced.count == listed) { break }
            }
            #expect(closed == nil, "the connection ended: \(closed ?? "")")
            #expect(listed == 1_000)
            #expect(priced.count == 1_000)
        }
    }
}
