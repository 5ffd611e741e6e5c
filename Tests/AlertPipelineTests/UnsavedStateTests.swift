import AlertEngine
import AlertModel
import AlertStore
import Testing

@testable import AlertPipeline

/// The daemon's engine state that a save could not write (an alert before it not yet in the
/// outbox): kept and written with the next save, newest snapshot per symbol.
@Suite struct UnsavedStateTests {
    func snapshot(_ symbol: String, price: Double) -> SymbolSnapshot {
        SymbolSnapshot(symbol: symbol, lastPrice: price)
    }

    @Test func aSaveWithNothingKeptWritesWhatItWasGiven() {
        var unsaved = UnsavedState()
        let given = [snapshot("BTC", price: 1)]
        let markets = MarketsSave(markets: [], source: "btse", fetchedAt: 1)
        let (snapshots, saved) = unsaved.adding(given, markets: markets)
        #expect(snapshots == given && saved == markets)
    }

    @Test func whatASaveCouldNotWriteGoesWithTheNextNewestFirst() {
        var unsaved = UnsavedState()
        let markets = MarketsSave(markets: [], source: "btse", fetchedAt: 1)
        let (first, firstMarkets) = unsaved.adding(
            [snapshot("BTC", price: 1), snapshot("ETH", price: 2)], markets: markets)
        unsaved.keep(first, markets: firstMarkets)

        let (second, secondMarkets) = unsaved.adding([snapshot("BTC", price: 3)], markets: nil)
        #expect(second.sorted { $0.symbol < $1.symbol } == [snapshot("BTC", price: 3), snapshot("ETH", price: 2)])
        #expect(secondMarkets == markets)

        // Taken out: once that save succeeds, nothing is kept any more.
        let (third, thirdMarkets) = unsaved.adding([snapshot("SOL", price: 4)], markets: nil)
        #expect(third == [snapshot("SOL", price: 4)] && thirdMarkets == nil)
    }
}
