import AlertModel
import JSONTokens

/// Poloniex v3 (`wss://ws.poloniex.com/ws/public`) `ticker` channel frames:
/// `{"channel":"ticker","data":[{"symbol":"BTC_USDC","close":"25153.02","dailyChange":"-0.0276","ts":1694469187081,…}]}`.
///
/// - Symbol: `symbol` as written (`BTC_USDC`), upper-cased. An entry without one is skipped.
/// - Price: `close`; numbers arrive as strings, JSON numbers are accepted too. Null, missing
///   or ≤ 0 skips the entry (counted).
/// - change24h: `dailyChange` is a fraction (`-0.0276` = −2.76 %), so it is ×100. Absent or
///   null: no change24h.
/// - Time: the entry's `ts` (epoch ms), else the receive time.
/// - `.control`: `{"event":"pong"}`, `{"event":"subscribe",…}`, `{"event":"error",…}` (see
///   `ControlFrame.errorMessage(in:)`) and frames of other channels.
/// Byte-scanned like BTSE coinIndex: with `symbols: ["all"]` this is a busy stream.
public enum PoloniexTicker {
    /// Subscribes to the ticker of every market.
    public static let subscribeMessage = #"{"event":"subscribe","channel":["ticker"],"symbols":["all"]}"#
    /// Poloniex closes idle connections; send this every ~20 s (docs: within 30 s). The answer
    /// is `{"event":"pong"}`.
    public static let pingMessage = #"{"event":"ping"}"#

    public static func parse(_ frame: [UInt8], receivedAt: Int64) -> FeedFrame {
        parseCounting(frame, receivedAt: receivedAt).frame
    }

    public static func parseCounting(_ frame: [UInt8], receivedAt: Int64) -> ParsedFrame {
        frame.withUnsafeBufferPointer { buffer in
            var scanner = JSONTokenizer(buffer)
            do throws(TickLineError) {
                return try scanner.poloniexFrame(receivedAt: receivedAt)
            } catch {
                return ParsedFrame(.invalid(FeedReason.notJSON("Poloniex ticker frame", error)))
            }
        }
    }
}

extension JSONTokenizer {
    fileprivate mutating func poloniexFrame(receivedAt: Int64) throws(TickLineError) -> ParsedFrame {
        var ticks: [Tick] = []
        var skipped = 0
        let envelope = try frameEnvelope(nameKey: "channel", name: "ticker", dataOpen: 0x5B) {
            scanner throws(TickLineError) in
            guard try scanner.enterContainer(0x5B, close: 0x5D) else { return }
            repeat {
                try scanner.poloniexTickerEntry(into: &ticks, skipped: &skipped, receivedAt: receivedAt)
            } while try scanner.nextInContainer(close: 0x5D)
        }
        return envelope.result(
            "Poloniex ticker frame", nameKey: "channel", expectedData: "an array", ticks: ticks, skipped: skipped)
    }

    /// One v3 ticker object at the cursor (websocket `data[]` element or REST `ticker24h`
    /// body). Appends a tick, or counts the entry as skipped.
    mutating func poloniexTickerEntry(
        into ticks: inout [Tick], skipped: inout Int,
        receivedAt: Int64
    ) throws(TickLineError) {
        guard peek == 0x7B else {
            try skipValue()
            skipped += 1
            return
        }
        var symbol: String?
        var close: Double?
        var dailyChange: Double?
        var ts: Int64?
        if try enterContainer(0x7B, close: 0x7D) {
            repeat {
                let (key, _) = try memberKey()
                switch key.count {
                case 2 where matches(key, "ts"): ts = try lenientInteger()
                case 5 where matches(key, "close"): close = try lenientNumber()
                case 6 where matches(key, "symbol") && peek == 0x22:
                    let (value, escaped) = try scanString()
                    symbol = upperCasedString(value, escaped: escaped)
                case 11 where matches(key, "dailyChange"): dailyChange = try lenientNumber()
                default: try skipValue()
                }
            } while try nextInContainer(close: 0x7D)
        }
        guard let symbol, !symbol.isEmpty, let price = usablePrice(close) else {
            skipped += 1
            return
        }
        let change = dailyChange.flatMap { $0.isFinite ? $0 * 100 : nil }
        ticks.append(Tick(time: ts ?? receivedAt, symbol: symbol, price: price, change24h: change))
    }
}
