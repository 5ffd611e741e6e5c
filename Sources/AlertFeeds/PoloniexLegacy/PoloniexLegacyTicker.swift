import AlertModel

/// The legacy ticker, `GET https://poloniex.com/public?command=returnTicker`:
/// `{"BTC_ARDR":{"id":177,"last":"0.00001248","percentChange":"-0.01732283","isFrozen":"0",…},…}`.
///
/// Legacy pairs are written QUOTE_BASE in today's terms: `BTC_ARDR` is ARDR priced in BTC
/// (its `baseVolume` is counted in BTC; Poloniex's legacy docs call BTC the "base" currency,
/// the opposite of the usual meaning, which `Market` uses). So `BTC_ARDR` becomes
/// `Market(symbol: "BTC_ARDR", name: "ARDR/BTC", base: "ARDR", quote: "BTC")`.
public struct PoloniexLegacyTicker: Sendable, Equatable {
    /// One market per pair, in body order; `active` is `isFrozen != "1"`.
    public var markets: [Market]
    /// `id` → pair (`177` → `BTC_ARDR`), for channel 1002 frames.
    public var pairs: [Int: String]
    /// A snapshot: price `last`, change24h `percentChange` × 100, time = the receive time.
    public var ticks: [Tick]
    /// Pairs without a usable price (null, not a number, ≤ 0) or not an object.
    public var skipped: Int

    public static let url = "https://poloniex.com/public?command=returnTicker"

    public static func parse(_ body: [UInt8], receivedAt: Int64) -> Result<PoloniexLegacyTicker, FeedPayloadError> {
        FeedJSON.parse(body, context: "Poloniex returnTicker").flatMap { json in
            guard let members = json.members else {
                return .failure(FeedPayloadError("Poloniex returnTicker: expected an object, found \(json.typeName)"))
            }
            if let error = json["error"]?.string {
                return .failure(FeedPayloadError("Poloniex returnTicker: error: \(error)"))
            }
            var table = PoloniexLegacyTicker(markets: [], pairs: [:], ticks: [], skipped: 0)
            for (pair, entry) in members {
                table.add(pair: pair.uppercased(), entry, receivedAt: receivedAt)
            }
            return .success(table)
        }
    }

    private mutating func add(pair: String, _ entry: FeedJSON, receivedAt: Int64) {
        guard entry.members != nil else {
            skipped += 1
            return
        }
        let (base, quote) = Self.baseAndQuote(pair)
        markets.append(
            Market(
                symbol: pair, name: base.isEmpty ? pair : "\(base)/\(quote)", base: base, quote: quote,
                future: false, active: entry["isFrozen"]?.integer != 1))
        if let id = entry["id"]?.integer, let key = Int(exactly: id) { pairs[key] = pair }
        guard let price = usablePrice(entry["last"]?.number) else {
            skipped += 1
            return
        }
        let change = entry["percentChange"]?.number.flatMap { $0.isFinite ? $0 * 100 : nil }
        ticks.append(Tick(time: receivedAt, symbol: pair, price: price, change24h: change))
    }

    /// `BTC_ARDR` → (base `ARDR`, quote `BTC`); a pair without exactly one `_` → ("", "").
    public static func baseAndQuote(_ pair: String) -> (base: String, quote: String) {
        let parts = pair.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return ("", "") }
        return (String(parts[1]), String(parts[0]))
    }

    /// The legacy docs' "Currency Pair IDs" table as JSON, `{"7":"BTC_BCN",…}` → `[7: "BTC_BCN"]`.
    /// Rows whose key is not an integer or whose value is not a string are left out.
    public static func pairIDs(_ body: [UInt8]) -> Result<[Int: String], FeedPayloadError> {
        FeedJSON.parse(body, context: "Poloniex pair ids").flatMap { json in
            guard let members = json.members else {
                return .failure(FeedPayloadError("Poloniex pair ids: expected an object, found \(json.typeName)"))
            }
            var table: [Int: String] = [:]
            for (key, value) in members {
                if let id = Int(key), let pair = value.string { table[id] = pair.uppercased() }
            }
            return .success(table)
        }
    }
}
