import AlertEngine
import AlertModel
import AlertStore
import Testing

@testable import AlertPipeline

/// What a standby keeps for a takeover (Docs/postgres.md#taking-over), and which lease each
/// key and event belongs to (`SourceLeases`).
@Suite("standby buffer and leases")
struct StandbyBufferTests {
    static func alert(_ time: Int64, source: String? = nil) -> Alert {
        var alert = Alert(
            rule: "up", symbol: "BTC", time: time, price: 1, condition: "crossesAbove", threshold: .value(1),
            value: 1, message: "", notify: ["ops"])
        alert.source = source
        return alert
    }

    @Test func eventsBeforeTheLeadersSaveLessTheMarginAreForgotten() {
        var buffer = StandbyBuffer()
        for at in [0, 50_000, 70_000, 100_000] as [Int64] { _ = buffer.add(Self.alert(at), lease: "bn", at: at) }
        _ = buffer.add(Self.alert(0), lease: "kr", at: 0)
        // bn's leader saved at 100 s: what was made 30 s before it or later is kept; kr has no save.
        buffer.trim(marks: ["bn": 100_000], now: 100_000)
        #expect(buffer.events["bn"]?.map(\.at) == [70_000, 100_000])
        #expect(buffer.events["kr"]?.count == 1)
        // An hour later nothing older than an hour is kept, save or not.
        buffer.trim(marks: [:], now: 3_600_000 + 80_000)
        #expect(buffer.events["bn"]?.map(\.at) == [100_000])
        #expect(buffer.events["kr"]?.isEmpty == true)
    }

    @Test func aFullBufferDropsTheOldestAndSaysSoOnce() {
        var buffer = StandbyBuffer()
        buffer.limit = 3
        let overflows = (0..<5).map { buffer.add(Self.alert(Int64($0)), lease: "bn", at: Int64($0)) }
        #expect(overflows == [false, false, false, true, false])
        #expect(buffer.events["bn"]?.map(\.alert.time) == [2, 3, 4])
    }

    @Test func aTakeoverTakesTheLeasesEventsInOrderAndItsSymbolsState() {
        var buffer = StandbyBuffer()
        let leases = SourceLeases(home: "binance", sources: ["kr"]) { _ in nil }
        _ = buffer.add(Self.alert(1), lease: "binance", at: 1)
        _ = buffer.add(Self.alert(2, source: "kr"), lease: "kr", at: 2)
        _ = buffer.add(Self.alert(3), lease: "binance", at: 3)
        for key in ["BTC", "kr:BTC", "@BASKET"] { buffer.state[key] = SymbolSnapshot(symbol: key) }
        let (events, state) = buffer.take("binance", leaseOfKey: leases.lease(ofKey:))
        #expect(events.map(\.time) == [1, 3])
        #expect(Set(state.map(\.symbol)) == ["BTC", "@BASKET"])
        #expect(buffer.events["binance"] == nil && buffer.state.keys.sorted() == ["kr:BTC"])
    }

    @Test func eachKeyAndEventBelongsToOneLease() {
        let leases = SourceLeases(home: "binance", sources: ["kr", "binance"]) { $0 == "kr" ? 4 : nil }
        #expect(leases.lease(ofKey: "kr:ETH/USD") == "kr")
        #expect(leases.lease(ofKey: "BTC/USDT") == "binance")
        #expect(leases.lease(ofKey: "@BASKET") == "binance")
        // A v1 symbol with a colon whose prefix is no source of the rule files.
        #expect(leases.lease(ofKey: "FOO:BAR") == "binance")
        #expect(leases.lease(ofSource: "kr") == "kr" && leases.lease(ofSource: nil) == "binance")
        #expect(leases.lease(ofSource: "added-by-sighup") == "binance")
        #expect(leases.all == ["binance", "kr"])
        #expect(leases.epoch(of: "kr") == 4 && leases.epoch(of: "binance") == nil)
    }
}
