import AlertModel
import Testing

@testable import AlertPolicy

@Suite struct GlobTests {
    @Test(arguments: [
        ("*", "", true), ("*", "btc-100k", true), ("btc-*", "btc-100k", true), ("btc-*", "eth-4k", false),
        ("?", "a", true), ("?", "", false), ("?", "ab", false), ("b?c-*k", "btc-100k", true),
        ("*-USD", "BTC-USD", true), ("*-USD", "BTC-USDT", false), ("*USD*", "XUSDY", true),
        ("a*b*c", "aXbYbZc", true), ("a*b*c", "aXbYbZ", false), ("exact", "exact", true), ("exact", "exactly", false)
    ])
    func matches(pattern: String, text: String, expected: Bool) throws {
        #expect(try Glob(pattern).matches(text) == expected)
    }

    @Test(arguments: ["", "a b", "btc[12]", "{a,b}", "a\\*", "tab\there"])
    func refusesWhatItWouldNotMatchAsMeant(pattern: String) {
        #expect(throws: GlobError.self) { try Glob(pattern) }
    }

    @Test func silenceMatchesUpperCasedSymbolInItsInterval() throws {
        let silence = Silence(id: "s1", rule: try Glob("btc-*"), symbol: try Glob("btc-*"), from: 1_000, until: 2_000)
        #expect(silence.symbol.pattern == "BTC-*")
        #expect(silence.silences(alert("btc-100k", "BTC-USD", at: 1_000)))
        #expect(silence.silences(alert("btc-100k", "BTC-USD", at: 1_999)))
        #expect(!silence.silences(alert("btc-100k", "BTC-USD", at: 2_000)), "until is not in the interval")
        #expect(!silence.silences(alert("btc-100k", "BTC-USD", at: 999)))
        #expect(!silence.silences(alert("eth-4k", "BTC-USD", at: 1_500)))
        #expect(!silence.silences(alert("btc-100k", "ETH-USD", at: 1_500)))
    }

    @Test func theEarliestMatchingSilenceNamesTheEvent() throws {
        let set = SilenceSet([
            Silence(id: "late", from: 500, until: 5_000),
            Silence(id: "early", rule: try Glob("btc-*"), from: 0, until: 5_000),
            Silence(id: "other", rule: try Glob("eth-*"), from: 0, until: 5_000)
        ])
        #expect(set.silence(for: alert("btc-1", at: 1_000))?.id == "early")
        #expect(set.silence(for: alert("sol-1", at: 1_000))?.id == "late")
        #expect(set.silence(for: alert("sol-1", at: 100)) == nil)
    }
}
