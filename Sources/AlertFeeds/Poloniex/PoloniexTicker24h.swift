import AlertModel
import JSONTokens

/// The v3 REST ticker, for a one-shot snapshot before the websocket delivers:
/// `GET https://api.poloniex.com/markets/{symbol}/ticker24h` (one object) or
/// `GET https://api.poloniex.com/markets/ticker24h` (an array of them). Fields and units as in
/// `PoloniexTicker`: price `close`, change24h `dailyChange` × 100, time `ts`.
public enum PoloniexTicker24h {
    public static func parse(_ body: [UInt8], receivedAt: Int64) -> FeedFrame {
        parseCounting(body, receivedAt: receivedAt).frame
    }

    public static func parseCounting(_ body: [UInt8], receivedAt: Int64) -> ParsedFrame {
        body.withUnsafeBufferPointer { buffer in
            var scanner = JSONTokenizer(buffer)
            var ticks: [Tick] = []
            var skipped = 0
            do throws(TickLineError) {
                scanner.skipWhitespace()
                switch scanner.peek {
                case 0x5B:
                    if try scanner.enterContainer(0x5B, close: 0x5D) {
                        repeat {
                            try scanner.poloniexTickerEntry(into: &ticks, skipped: &skipped, receivedAt: receivedAt)
                        } while try scanner.nextInContainer(close: 0x5D)
                    }
                case 0x7B:
                    try scanner.poloniexTickerEntry(into: &ticks, skipped: &skipped, receivedAt: receivedAt)
                default:
                    throw scanner.unexpected("expected '{' or '['")
                }
                scanner.skipWhitespace()
                guard scanner.atEnd else {
                    throw TickLineError.syntax("unexpected text after the value", at: scanner.offset)
                }
            } catch {
                return ParsedFrame(.invalid(FeedReason.notJSON("Poloniex ticker24h", error)))
            }
            return ParsedFrame(.ticks(ticks), skipped: skipped)
        }
    }
}
