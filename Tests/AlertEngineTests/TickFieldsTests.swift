import Testing

@testable import AlertModel

/// A tick keeps its 24-hour volume and its source packed in one word beside its symbol
/// (`Tick.extras`), so that copying it retains one string: each field reads back as given,
/// alone and together, and ticks compare as their fields do.
@Suite("Tick fields")
struct TickFieldsTests {
    static let volumes: [Double?] = [
        nil, 0, -0.0, 1.5e12, .infinity, .greatestFiniteMagnitude, .leastNonzeroMagnitude, -3
    ]
    static let sources: [String?] = [nil, "a", "binance", "okx", String(repeating: "z-9", count: 10) + "ab"]

    @Test(arguments: volumes)
    func volumeAndSourceReadBackAsGiven(volume: Double?) {
        for source in Self.sources {
            var tick = Tick(
                time: -7, symbol: "BTC/USDT", price: 2.5, change24h: -1.25, source: source, volume24h: volume)
            #expect(tick.time == -7 && tick.symbol == "BTC/USDT" && tick.price == 2.5 && tick.change24h == -1.25)
            #expect(tick.source == source)
            #expect(tick.volume24h?.bitPattern == volume?.bitPattern)
            // Setting one leaves the other as it was.
            tick.volume24h = nil
            #expect(tick.source == source)
            #expect(tick.volume24h == nil)
            tick.source = "kraken"
            tick.volume24h = volume
            #expect(tick.source == "kraken")
            #expect(tick.volume24h?.bitPattern == volume?.bitPattern)
            tick.source = nil
            #expect(tick.source == nil)
            #expect(tick.volume24h?.bitPattern == volume?.bitPattern)
            #expect(tick.change24h == -1.25)
        }
    }

    @Test func ticksCompareAsTheirFieldsDo() {
        let tick = Tick(time: 1, symbol: "ETH", price: 3, source: "bybit", volume24h: 10)
        #expect(tick == Tick(time: 1, symbol: "ETH", price: 3, source: String("by" + "bit"), volume24h: 10))
        #expect(tick != Tick(time: 1, symbol: "ETH", price: 3, source: "bybit-eu", volume24h: 10))
        #expect(tick != Tick(time: 1, symbol: "ETH", price: 3, volume24h: 10))
        #expect(tick != Tick(time: 1, symbol: "ETH", price: 3, source: "bybit"))
        #expect(tick != Tick(time: 1, symbol: "ETH", price: 3, source: "bybit", volume24h: 11))
        #expect(tick != Tick(time: 1, symbol: "ETH", price: 3, change24h: 0, source: "bybit", volume24h: 10))
        // As `Double?`: zero equals negative zero, NaN equals nothing.
        #expect(
            Tick(time: 1, symbol: "ETH", price: 3, volume24h: 0)
                == Tick(time: 1, symbol: "ETH", price: 3, volume24h: -0.0))
        let nan = Tick(time: 1, symbol: "ETH", price: 3, volume24h: .nan)
        #expect(nan != nan)
        #expect(nan.volume24h?.isNaN == true)
    }

    @Test func aSourceHasOneNumberWhoeverNumbersIt() async {
        let names = (0..<40).map { "numbered-\($0)" }
        let numbered = await withTaskGroup(of: [SourceNumber].self) { group in
            for _ in 0..<8 { group.addTask { names.shuffled().sorted().map { SourceNumber($0) } } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(numbered.map { $0.map(\.value) }).count == 1)
        #expect(numbered[0].map(\.name) == names.sorted().map(Optional.some))
        #expect(Set(numbered[0].map(\.value)).count == names.count)
        #expect(SourceNumber(nil).name == nil)
        #expect(SourceNumber("numbered-3") == numbered[0][names.sorted().firstIndex(of: "numbered-3")!])
    }

    /// What keeps a tick's copy one retain (the comment on `Tick.extras`): one string and plain
    /// bits in 64 bytes. A second string, or another optional field, makes it larger.
    @Test func aTickIsOneStringAndPlainBits() {
        #expect(MemoryLayout<Tick>.size <= 64)
        #expect(MemoryLayout<Tick>.stride <= 64)
    }
}
