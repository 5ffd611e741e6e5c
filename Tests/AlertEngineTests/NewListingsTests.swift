import AlertEngine
import AlertModel
import Testing

@Suite("new listings")
struct NewListingsTests {
    static func market(_ symbol: String, quote: String = "USD", future: Bool = false) -> Market {
        Market(symbol: symbol, name: symbol + "-" + quote, base: symbol, quote: quote, future: future, active: true)
    }

    static let rules = [
        Rule(id: "usd", scope: .match(MarketFilter(quote: "USD")), condition: .listed),
        Rule(id: "price", scope: .symbols(["NEW"]), condition: .price(.above(0))),
        Rule(id: "futures", scope: .match(MarketFilter(future: true)), condition: .listed),
        Rule(id: "off", scope: .match(MarketFilter()), condition: .listed, enabled: false)
    ]

    @Test("the first list fires nothing; an added market fires its matching rules once, at its first tick")
    func addedMarketFiresOnce() {
        var listings = NewListings(rules: Self.rules)
        #expect(!listings.isEmpty)
        var alerts: [Alert] = []
        listings.update(MarketList([Self.market("BTC")]))
        listings.process(Tick(time: 1, symbol: "BTC", price: 10), into: &alerts)
        #expect(alerts.isEmpty)
        #expect(listings.known == ["BTC"])

        listings.update(MarketList([Self.market("BTC"), Self.market("NEW"), Self.market("GONE")]))
        listings.update(MarketList([Self.market("BTC"), Self.market("NEW")]))
        #expect(listings.pending == ["NEW"])
        listings.process(Tick(time: 2, symbol: "BTC", price: 10), into: &alerts)
        #expect(alerts.isEmpty)
        listings.process(Tick(time: 3, symbol: "new", price: 1.5), into: &alerts)
        #expect(alerts.map(\.rule) == ["usd"])
        #expect(alerts.first?.symbol == "NEW")
        #expect(alerts.first?.time == 3)
        #expect(alerts.first?.price == 1.5)
        #expect(alerts.first?.condition == "listed")
        #expect(alerts.first?.threshold == Threshold.none)
        #expect(alerts.first?.message == "NEW listed (price 1.5)")
        listings.process(Tick(time: 4, symbol: "NEW", price: 1.6), into: &alerts)
        #expect(alerts.count == 1)
        #expect(listings.pending.isEmpty)
    }

    @Test("restored state: pending markets still fire; no saved list means the next one is the first")
    func restore() {
        var listings = NewListings(rules: Self.rules)
        listings.restore(known: ["BTC", "NEW"], pending: ["NEW"])
        #expect(!listings.changed)
        listings.update(MarketList([Self.market("BTC"), Self.market("NEW")]))
        var alerts: [Alert] = []
        listings.process(Tick(time: 5, symbol: "NEW", price: 2), into: &alerts)
        #expect(alerts.map(\.rule) == ["usd"])
        #expect(listings.changed)

        var fresh = NewListings(rules: Self.rules)
        fresh.restore(known: nil, pending: [])
        fresh.update(MarketList([Self.market("BTC"), Self.market("NEW")]))
        #expect(fresh.pending.isEmpty)
        #expect(NewListings(rules: [Self.rules[1]]).isEmpty)
    }
}
