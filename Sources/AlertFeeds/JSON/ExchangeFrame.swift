import AlertModel

/// One price of an exchange's public ticker channel, made as `Docs/sources.md` (rules v3 §2)
/// says: `symbol` exactly as the exchange writes it (mapping to `BASE/QUOTE` is the market
/// list's job), `time` the exchange's own event time (epoch ms), a usable `price`, and the
/// 24 h change (%) and quote volume only when the exchange sent them as finite numbers.
public struct ExchangeTick: Sendable, Equatable {
    public var symbol: String
    public var time: Int64
    public var price: Double
    public var change24h: Double?
    public var volume24h: Double?

    public init(symbol: String, time: Int64, price: Double, change24h: Double? = nil, volume24h: Double? = nil) {
        self.symbol = symbol
        self.time = time
        self.price = price
        self.change24h = change24h
        self.volume24h = volume24h
    }
}

/// A frame that carries no price but means something to the connection.
public enum ExchangeControl: Sendable, Equatable {
    /// A subscribe acknowledgement; the text names what was acknowledged.
    case subscribed(String)
    /// The exchange reports an error; the text is its own message (as data, never markup).
    case error(String)
    case heartbeat
    case pong
    /// Any other known notice (Kraken `status`, Binance `serverShutdown`, OKX `notice`).
    case notice(String)
}

/// What one websocket frame of the five v3 exchanges says. Never a crash: anything not
/// understood is `.dropped` with a reason naming the exchange and what is wrong.
public enum ExchangeFrame: Sendable, Equatable {
    /// Prices, and how many entries of the frame were skipped (no usable price, no time, a
    /// refused symbol). A frame whose entries were all skipped is `.dropped` instead.
    case ticks([ExchangeTick], skipped: Int)
    case control(ExchangeControl)
    case dropped(String)
}

/// A spot market of an exchange's REST market list, in the common asset codes.
public struct ExchangeMarket: Sendable, Equatable {
    /// How the exchange names the market in its frames and REST paths (`BTCUSDT`, `XXBTZUSD`).
    public var exchangeSymbol: String
    public var base: String
    public var quote: String
    public var active: Bool

    public init(exchangeSymbol: String, base: String, quote: String, active: Bool) {
        self.exchangeSymbol = exchangeSymbol
        self.base = base
        self.quote = quote
        self.active = active
    }

    /// `BASE/QUOTE`: the symbol of this market's ticks in rules and alerts.
    public var symbol: String { "\(base)/\(quote)" }
}

/// Building blocks shared by the five exchange parsers.
enum ExchangeJSON {
    /// The frame as JSON, or the `.dropped` reason (`Kraken frame: not JSON at byte 3 (…)`).
    static func parse(_ frame: [UInt8], _ context: String) -> Result<FeedJSON, ExchangeFrameFailure> {
        FeedJSON.parse(frame).mapError { ExchangeFrameFailure(reason: FeedReason.notJSON(context, $0)) }
    }

    /// A symbol or asset code a parser may keep: a string of 1–64 bytes without control
    /// characters (C0, DEL, C1). Nil refuses it.
    static func symbol(_ value: FeedJSON?) -> String? {
        guard let text = value?.string, !text.isEmpty, text.utf8.count <= 64,
            !text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        else { return nil }
        return text
    }

    /// A finite number (JSON number or a string holding one), else nil: the figure is left out.
    static func figure(_ value: FeedJSON?) -> Double? {
        guard let n = value?.number, n.isFinite else { return nil }
        return n
    }

    /// `a × b` when both are given and the product is finite (a base volume × a price), else nil.
    static func product(_ a: Double?, _ b: Double?) -> Double? {
        guard let a, let b, (a * b).isFinite else { return nil }
        return a * b
    }

    /// An epoch-ms time: an integer (or a string holding one), or an RFC 3339 string.
    static func millis(_ value: FeedJSON?) -> Int64? {
        if let i = value?.integer { return i }
        guard let text = value?.string else { return nil }
        return Timestamp.parse(Array(text.utf8))
    }

    /// The printable text of an exchange message: control characters become `?`, at most
    /// 200 characters, so feed text never carries markup or escapes into our output.
    static func text(_ value: String) -> String {
        let cleaned = String(
            String.UnicodeScalarView(
                value.unicodeScalars.prefix(200).map {
                    $0.value < 0x20 || (0x7F...0x9F).contains($0.value) ? "?" : $0
                }))
        return value.unicodeScalars.count > 200 ? cleaned + "…" : cleaned
    }
}

struct ExchangeFrameFailure: Error {
    let reason: String
}

/// Collects the ticks of one frame and the reason of the first skipped entry.
struct TickCollector {
    let context: String
    var ticks: [ExchangeTick] = []
    var skipped = 0
    var firstReason: String?

    init(_ context: String) { self.context = context }

    mutating func skip(_ reason: String) {
        skipped += 1
        if firstReason == nil { firstReason = reason }
    }

    /// Adds a tick, or counts the entry as skipped when its symbol is missing or refused, its
    /// price is not usable (`usablePrice`) or it has no time.
    mutating func add(symbol: FeedJSON?, time: Int64?, price: Double?, change24h: Double?, volume24h: Double?) {
        guard let raw = symbol?.string else { return skip("an entry has no symbol") }
        guard let name = ExchangeJSON.symbol(symbol) else {
            return skip("symbol \"\(ExchangeJSON.text(raw))\" refused (empty, over 64 bytes or control characters)")
        }
        add(name: name, time: time, price: price, change24h: change24h, volume24h: volume24h)
    }

    /// The same for a symbol already kept by `ExchangeJSON.symbol`'s rule; nil: the entry has none.
    mutating func add(name: String?, time: Int64?, price: Double?, change24h: Double?, volume24h: Double?) {
        guard let name else { return skip("an entry has no symbol") }
        guard let price = usablePrice(price) else { return skip("\(name): no usable price") }
        guard let time else { return skip("\(name): no event time") }
        ticks.append(ExchangeTick(symbol: name, time: time, price: price, change24h: change24h, volume24h: volume24h))
    }

    var frame: ExchangeFrame {
        if ticks.isEmpty {
            return .dropped("\(context): \(firstReason ?? "no ticker entries")")
        }
        return .ticks(ticks, skipped: skipped)
    }
}

/// Candle intervals every v3 exchange offers; each exchange spells them its own way.
public enum ExchangeInterval: Sendable, CaseIterable {
    case minute, fiveMinutes, fifteenMinutes, hour, fourHours, day

    public var millis: Int64 {
        switch self {
        case .minute: 60_000
        case .fiveMinutes: 300_000
        case .fifteenMinutes: 900_000
        case .hour: 3_600_000
        case .fourHours: 14_400_000
        case .day: 86_400_000
        }
    }
}

extension Array {
    /// The elements in consecutive groups of at most `size` (the last may be shorter).
    func batched(_ size: Int) -> [[Element]] {
        stride(from: 0, to: count, by: Swift.max(size, 1)).map { Array(self[$0..<Swift.min($0 + size, count)]) }
    }
}

/// A JSON string literal of `text` (quotes, backslashes and control characters escaped).
func jsonString(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case _ where scalar.value < 0x20:
            let hex = Array("0123456789abcdef")
            out += "\\u00" + String(hex[Int(scalar.value >> 4)]) + String(hex[Int(scalar.value & 0xF)])
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

extension CandlePage {
    /// Rows `[start, open, high, low, close, …]` (Kraken, Bybit, OKX; numbers or strings), in
    /// any order: the candle is `[start × unit, start × unit + interval)` with `unit` the
    /// milliseconds of the time's unit (1000 for seconds). Other rows are counted as skipped.
    static func startRows(_ rows: [FeedJSON], interval: ExchangeInterval, unit: Int64 = 1) -> CandlePage {
        let candles = rows.compactMap { row -> Candle? in
            guard let r = row.array, r.count >= 5, let time = r[0].integer, abs(time) < Int64.max / unit / 2,
                let o = r[1].number, let h = r[2].number, let l = r[3].number, let c = r[4].number
            else { return nil }
            return Candle(start: time * unit, end: time * unit &+ interval.millis, open: o, high: h, low: l, close: c)
        }
        return CandlePage(unordered: candles, skipped: rows.count - candles.count)
    }
}
