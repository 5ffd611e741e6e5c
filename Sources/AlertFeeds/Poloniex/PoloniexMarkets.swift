import AlertModel

/// The v3 market list, `GET https://api.poloniex.com/markets`: an array of
/// `{"symbol":"BTC_USDT","baseCurrencyName":"BTC","quoteCurrencyName":"USDT","displayName":"BTC/USDT","state":"NORMAL",…}`.
///
/// `Market.symbol` is `symbol` (what ticker frames carry), `name` is `displayName`, `future`
/// is false (this is the spot API), `active` is `state == "NORMAL"` (other states seen in the
/// docs: `PAUSE`, `OFFLINE`). An entry without a string `symbol` is skipped.
public enum PoloniexMarkets {
    public static let url = "https://api.poloniex.com/markets"

    public static func parse(_ body: [UInt8]) -> Result<[Market], FeedPayloadError> {
        FeedJSON.parseArray(body, context: "Poloniex markets").map(markets)
    }

    private static func markets(_ entries: [FeedJSON]) -> [Market] {
        entries.compactMap { entry in
            guard let symbol = entry["symbol"]?.string, !symbol.isEmpty else { return nil }
            return Market(
                symbol: symbol.uppercased(),
                name: entry["displayName"]?.string ?? "",
                base: entry["baseCurrencyName"]?.string ?? "",
                quote: entry["quoteCurrencyName"]?.string ?? "",
                future: false,
                active: entry["state"]?.string == "NORMAL")
        }
    }
}
