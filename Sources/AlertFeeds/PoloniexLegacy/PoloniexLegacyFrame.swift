import AlertModel

/// Legacy websocket frames (`wss://api2.poloniex.com`), channel 1002 "ticker data":
/// `[1002,null,[id,"last","lowestAsk","highestBid","percentChange","baseVolume","quoteVolume",isFrozen,"high24hr","low24hr"]]`.
///
/// - `[1002,1]` (subscribed) and `[1002,0]` → `.control`; `[1010]` (heartbeat) → `.control`;
///   other channels (`[1003,…]` 24-hour volume, `[1001,…]`, order books) → `.control`: not ours.
/// - A ticker row → one tick for the pair with that id in `pairs` (from
///   `PoloniexLegacyTicker.pairs` or `pairIDs`): price `last`, change24h `percentChange` × 100
///   (a fraction), time = the receive time (rows carry none). An id not in `pairs` →
///   `.invalid("unknown pair id 999")`. A row without a usable `last` → `.ticks([])`, skipped 1.
public enum PoloniexLegacyFrame {
    public static let subscribeMessage = #"{"command":"subscribe","channel":1002}"#
    public static let tickerChannel: Int64 = 1002
    public static let heartbeatChannel: Int64 = 1010

    public static func parse(_ frame: [UInt8], receivedAt: Int64, pairs: [Int: String]) -> FeedFrame {
        parseCounting(frame, receivedAt: receivedAt, pairs: pairs).frame
    }

    public static func parseCounting(_ frame: [UInt8], receivedAt: Int64, pairs: [Int: String]) -> ParsedFrame {
        let json: FeedJSON
        switch FeedJSON.parse(frame) {
        case .success(let value): json = value
        case .failure(let error): return ParsedFrame(.invalid(FeedReason.notJSON("Poloniex legacy frame", error)))
        }
        guard let items = json.array, let channel = items.first?.integer else {
            return ParsedFrame(.invalid("Poloniex legacy frame: expected an array starting with a channel number"))
        }
        guard channel == tickerChannel, items.count >= 3 else { return ParsedFrame(.control) }
        guard let row = items[2].array else {
            return ParsedFrame(.invalid("Poloniex legacy frame: ticker row is \(items[2].typeName)"))
        }
        guard row.count >= 5, let id = row[0].integer else {
            return ParsedFrame(.invalid("Poloniex legacy frame: ticker row needs an id and 4 values"))
        }
        guard let key = Int(exactly: id), let pair = pairs[key] else {
            return ParsedFrame(.invalid("unknown pair id \(id)"))
        }
        guard let price = usablePrice(row[1].number) else { return ParsedFrame(.ticks([]), skipped: 1) }
        let change = row[4].number.flatMap { $0.isFinite ? $0 * 100 : nil }
        return ParsedFrame(.ticks([Tick(time: receivedAt, symbol: pair.uppercased(), price: price, change24h: change)]))
    }
}
