import AlertFeeds
import DemoExchange
import Foundation
import Testing

@Suite("REST routes")
struct RESTTests {
    @Test("the market list is the embedded 227-market payload")
    func marketList() async throws {
        try await withExchange { _, port in
            let reply = try await get(port, "/futures/api/inquire/initial/market")
            #expect(reply.status == 200)
            #expect(reply.headers["content-type"] == "application/json")
            let markets = try BTSEMarketList.decode(reply.body, source: "demo exchange")
            #expect(markets.count == 227)
            #expect(markets.filter { !$0.future }.count == 156)
        }
    }

    @Test("market_summary has one entry per spot market, in BTSE's shape, with a numeric last")
    func marketSummary() async throws {
        try await withExchange { _, port in
            let reply = try await get(port, "/spot/api/v3.2/market_summary")
            #expect(reply.status == 200)
            #expect(reply.headers["content-type"] == "application/json")
            let entries = try #require(try JSONSerialization.jsonObject(with: reply.body) as? [[String: Any]])
            #expect(entries.count == 156)
            let fields = [
                "symbol", "last", "lowestAsk", "highestBid", "percentageChange", "volume", "high24Hr",
                "low24Hr", "base", "quote", "active", "size", "minValidPrice", "minPriceIncrement",
                "minOrderSize", "maxOrderSize", "minSizeIncrement", "openInterest", "futures"
            ]
            for entry in entries {
                for field in fields { #expect(entry[field] != nil, "\(entry["symbol"] ?? "?") lacks \(field)") }
                let last = try #require(entry["last"] as? Double)
                #expect(last > 0)
                #expect(entry["futures"] as? Bool == false)
            }
            let btc = try #require(entries.first { $0["symbol"] as? String == "BTC-USD" })
            let last = try #require(btc["last"] as? Double)
            #expect(last > 30_000 && last < 60_000)
            #expect(btc["base"] as? String == "BTC")
            #expect(btc["quote"] as? String == "USD")
        }
    }

    @Test("market_summary?symbol= keeps one market")
    func marketSummaryFilter() async throws {
        try await withExchange { _, port in
            let reply = try await get(port, "/spot/api/v3.2/market_summary?symbol=ETH-USD")
            let entries = try #require(try JSONSerialization.jsonObject(with: reply.body) as? [[String: Any]])
            #expect(entries.count == 1)
            #expect(entries.first?["symbol"] as? String == "ETH-USD")
        }
    }

    @Test("status429 answers the first N requests with 429 and Retry-After: 1")
    func tooManyRequests() async throws {
        try await withExchange(walk(faults: ExchangeFaults(status429: 2))) { server, port in
            for _ in 0..<2 {
                let reply = try await get(port, "/futures/api/inquire/initial/market")
                #expect(reply.status == 429)
                #expect(reply.headers["retry-after"] == "1")
            }
            #expect(try await get(port, "/spot/api/v3.2/market_summary").status == 200)
            #expect(server.stats.restRequests == 3)
            #expect(server.stats.restRejected == 2)
        }
    }

    @Test("a server starts once, reports its port, and stops")
    func lifecycle() async throws {
        let server = DemoExchangeServer(configuration: ExchangeConfiguration(port: 0))
        let port = try await server.start()
        #expect(port > 0)
        #expect(server.port == port)
        await #expect(throws: DemoExchangeError.alreadyStarted) { try await server.start() }
        await server.stop()
        #expect(server.port == nil)
        await server.stop()
    }
}
