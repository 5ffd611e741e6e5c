import AlertModel
import Testing

@testable import AlertFeeds

/// Tick lines of rules v3 §1: `"source"` and `"volume24h"`.
@Suite struct TickLineSourceTests {
    private func tick(_ line: String) -> Tick? {
        try? TickLineParser.parse(line).get()
    }

    private func error(_ line: String) -> String? {
        if case .failure(let e) = TickLineParser.parse(line) { return e.message }
        return nil
    }

    @Test func specExample() {
        #expect(
            tick(
                #"{"time": 1700000000000, "source": "binance", "symbol": "BTC/USDT", "price": 43000.5, "change24h": -1.2, "volume24h": 1.9e9}"#
            )
                == Tick(
                    time: 1_700_000_000_000, symbol: "BTC/USDT", price: 43000.5, change24h: -1.2, source: "binance",
                    volume24h: 1.9e9))
    }

    @Test func withoutSourceOrVolumeTheTickHasNone() {
        let plain = tick(#"{"time":1,"symbol":"btc","price":1}"#)
        #expect(plain?.source == nil)
        #expect(plain?.volume24h == nil)
        #expect(plain?.key == "BTC")
    }

    @Test func theKeyJoinsSourceAndUpperCasedSymbol() {
        #expect(tick(#"{"time":1,"source":"kraken-2","symbol":"eth/usd","price":1}"#)?.key == "kraken-2:ETH/USD")
    }

    @Test(arguments: [
        #""source":"a""#, #""source":"0-9""#, "\"source\":\"" + String(repeating: "x", count: 32) + "\"",
        #""source":"\u0062inance""#
    ])
    func validSourceNames(field: String) {
        #expect(tick(#"{"time":1,\#(field),"symbol":"A","price":1}"#)?.source != nil)
    }

    @Test(arguments: [
        #""source":"""#, #""source":"Binance""#, #""source":"bin ance""#, #""source":"bin_ance""#,
        #""source":"binance:x""#, "\"source\":\"" + String(repeating: "x", count: 33) + "\"", #""source":null"#,
        #""source":1"#, #""source":["binance"]"#, #""source":"\u00e9""#
    ])
    func aBadSourceIsABadLine(field: String) {
        #expect(
            error(#"{"time":1,\#(field),"symbol":"A","price":1}"#)
                == "\"source\" must be a source name: 1 to 32 of a-z, 0-9 and '-'")
    }

    @Test func aSourceGivenTwiceIsABadLine() {
        #expect(error(#"{"time":1,"source":"a","source":"a","symbol":"A","price":1}"#) == #"duplicate key "source""#)
        #expect(
            error(#"{"time":1,"volume24h":1,"volume24h":null,"symbol":"A","price":1}"#) == #"duplicate key "volume24h""#
        )
    }

    @Test(arguments: [("0", 0.0), ("1.5e9", 1.5e9), ("12", 12.0), ("0.0", 0.0)])
    func validVolumes(text: String, volume: Double) {
        #expect(tick(#"{"time":1,"symbol":"A","price":1,"volume24h":\#(text)}"#)?.volume24h == volume)
    }

    /// A volume that is not a finite number ≥ 0 is left out; the tick itself is kept.
    @Test(arguments: ["-1", "-0.001", "1e999", "-1e999", "null", #""12""#, "true", "[1]", #"{"v":1}"#])
    func aBadVolumeIsIgnored(text: String) {
        let parsed = tick(#"{"time":1,"symbol":"A","price":2,"volume24h":\#(text),"change24h":3}"#)
        #expect(parsed == Tick(time: 1, symbol: "A", price: 2, change24h: 3))
    }

    @Test func aMalformedVolumeValueIsStillASyntaxError() {
        #expect(error(#"{"time":1,"symbol":"A","price":2,"volume24h":tru}"#) != nil)
    }

    /// What `record` writes (`TickFormat.json`) reads back as the same tick.
    @Test(arguments: [
        Tick(time: 1, symbol: "BTC", price: 2),
        Tick(time: 1_700_000_000_000, symbol: "btc/usdt", price: 43000.5, change24h: -1.2, source: "binance"),
        Tick(time: 5, symbol: "ETH-USD", price: 0.25, source: "coinbase-2", volume24h: 1.9e9),
        Tick(time: 5, symbol: "\"q\"", price: 1e-9, change24h: 0, volume24h: 0)
    ])
    func recordedLinesReadBack(tick: Tick) {
        #expect(self.tick(TickFormat.json(tick)) == tick)
    }

    @Test func recordedLineOfTheSpecExample() {
        let tick = Tick(
            time: 1_700_000_000_000, symbol: "BTC/USDT", price: 43000.5, change24h: -1.2, source: "binance",
            volume24h: 1.9e9)
        #expect(
            TickFormat.json(tick)
                == #"{"time":1700000000000,"source":"binance","symbol":"BTC/USDT","price":43000.5,"change24h":-1.2,"volume24h":1900000000}"#
        )
    }
}
