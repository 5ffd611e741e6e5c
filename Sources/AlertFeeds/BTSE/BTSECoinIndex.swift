import AlertModel
import JSONTokens

/// The BTSE `coinIndex` websocket topic: every index price in one frame,
/// `{"topic":"coinIndex","id":null,"data":{"BTC_1":{"id":"BTC","name":"BTC","type":1,"price":43210.5},…}}`.
///
/// This is the live hot path (frames of ~150 entries, all day), so it walks the bytes with
/// `JSONTokenizer`: no Foundation, no intermediate tree.
///
/// - Symbol: the `data` key with a trailing `_<digits>` removed (`BTC_1` → `BTC`), upper-cased.
///   A key without such a suffix is used as it is. The stripped symbol is what joins the market
///   list's `symbol` (see Docs/sources.md). If a frame ever had `BTC_1` and `BTC_2`, both would
///   become `BTC` ticks, in frame order.
/// - Price: `price`, a number or a numeric string. Null, missing, non-numeric or ≤ 0 skips
///   that entry (counted), never the frame. An entry that is not an object is skipped too.
/// - Time: the frame has no timestamp of its own, so every tick gets the receive time.
/// - `.control`: the text frames `connect success` and `pong`, any object with an `event`
///   member (subscribe acks, login, error events; see `ControlFrame.errorMessage(in:)`), and
///   frames of other topics (`tradeHistoryApi:BTC-USD`, …), which are not ours.
/// - `.invalid`: anything else, with the reason (`coinIndex frame: not JSON at byte 57 (…)`).
public enum BTSECoinIndex {
    public static let topic = "coinIndex"
    /// Where r97looke/BTSECryptoMarketList (the source of the snippet fixture) subscribes to it.
    public static let url = "wss://ws.btse.com/ws/futures"
    /// Sent after connecting (BTSE's `op`/`args` subscribe form, as that project sends it).
    public static let subscribeMessage = #"{"op":"subscribe","args":["coinIndex"]}"#
    /// BTSE keeps the connection open when the client sends this text; the server answers `pong`.
    public static let pingMessage = "ping"

    public static func parse(_ frame: [UInt8], receivedAt: Int64) -> FeedFrame {
        parseCounting(frame, receivedAt: receivedAt).frame
    }

    public static func parseCounting(_ frame: [UInt8], receivedAt: Int64) -> ParsedFrame {
        frame.withUnsafeBufferPointer { parseCounting($0, receivedAt: receivedAt) }
    }

    public static func parseCounting(_ frame: UnsafeBufferPointer<UInt8>, receivedAt: Int64) -> ParsedFrame {
        var scanner = JSONTokenizer(frame)
        scanner.skipWhitespace()
        guard scanner.peek == 0x7B else {
            if ControlFrame.isPlainText(frame, oneOf: ["connect success", "pong"]) { return ParsedFrame(.control) }
            if scanner.atEnd { return ParsedFrame(.invalid("coinIndex frame: empty")) }
            return ParsedFrame(
                .invalid("coinIndex frame: not JSON at byte \(scanner.offset) (\(FeedReason.preview(frame)))"))
        }
        do {
            return try scanner.coinIndexFrame(receivedAt: receivedAt)
        } catch {
            return ParsedFrame(.invalid(FeedReason.notJSON("coinIndex frame", error)))
        }
    }
}

extension JSONTokenizer {
    fileprivate mutating func coinIndexFrame(receivedAt: Int64) throws(TickLineError) -> ParsedFrame {
        var ticks: [Tick] = []
        var skipped = 0
        let envelope = try frameEnvelope(nameKey: "topic", name: "coinIndex", dataOpen: 0x7B) {
            scanner throws(TickLineError) in
            try scanner.coinIndexEntries(into: &ticks, skipped: &skipped, receivedAt: receivedAt)
        }
        return envelope.result(
            "coinIndex frame", nameKey: "topic", expectedData: "an object", ticks: ticks, skipped: skipped)
    }

    /// `{"BTC_1": {...}, ...}` at the cursor.
    private mutating func coinIndexEntries(
        into ticks: inout [Tick], skipped: inout Int,
        receivedAt: Int64
    ) throws(TickLineError) {
        guard try enterContainer(0x7B, close: 0x7D) else { return }
        repeat {
            let (key, escaped) = try memberKey()
            guard peek == 0x7B else {
                try skipValue()
                skipped += 1
                continue
            }
            var price: Double?
            if try enterContainer(0x7B, close: 0x7D) {
                repeat {
                    let (field, _) = try memberKey()
                    if matches(field, "price") {
                        price = try lenientNumber()
                    } else {
                        try skipValue()
                    }
                } while try nextInContainer(close: 0x7D)
            }
            let symbolRange = Self.withoutIndexSuffix(key, in: bytes)
            guard let price = usablePrice(price), !symbolRange.isEmpty else {
                skipped += 1
                continue
            }
            ticks.append(Tick(time: receivedAt, symbol: upperCasedString(symbolRange, escaped: escaped), price: price))
        } while try nextInContainer(close: 0x7D)
    }

    /// `BTC_1` → `BTC`: drops a trailing `_` followed by one or more digits. Keys written
    /// with escapes keep their whole text (no real key has them).
    static func withoutIndexSuffix(_ key: Range<Int>, in bytes: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        var i = key.upperBound
        while i > key.lowerBound, bytes[i - 1] &- 0x30 < 10 { i -= 1 }
        guard i < key.upperBound, i - 1 > key.lowerBound, bytes[i - 1] == 0x5F else { return key }
        return key.lowerBound..<(i - 1)
    }
}
