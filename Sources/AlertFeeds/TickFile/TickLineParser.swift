import AlertModel
import JSONTokens

/// Parses one JSON Lines tick (Docs/rules.md#ticks):
/// `{"time": 1700000000000, "source": "binance", "symbol": "BTC", "price": 43000.5, "change24h": -1.25,
/// "volume24h": 1.9e9}`.
///
/// A byte scanner, not a JSON decoder: it is the replay hot path. The contract:
/// - the line is one JSON object, with whitespace wherever JSON allows it; keys in any order;
///   unknown keys of any type are skipped (and validated); a key given twice is malformed;
/// - `time`: integer epoch milliseconds or an RFC 3339 string (`Timestamp.parse`);
/// - `symbol`: a string, returned as written (an empty one is the engine's `empty-symbol`);
/// - `price`: required; a number, or any other JSON value, which yields `price = .nan` so the
///   engine drops the tick as `invalid-price` (the line *is* a tick, with a bad price);
/// - `change24h`: optional; a number or `null` (nil);
/// - `source` (rules v3 §1): optional; a string matching `[a-z0-9-]{1,32}` (`SourceDefinition.isName`);
/// - `volume24h` (rules v3 §1): optional; a finite number ≥ 0, any other value is left out
///   of the tick (nil) and the tick kept;
/// - nothing but whitespace after the object.
/// Anything else is a `TickLineError` (the tick is `malformed`).
public enum TickLineParser {
    public static func parse(_ line: UnsafeBufferPointer<UInt8>) -> Result<Tick, TickLineError> {
        var scanner = JSONTokenizer(line)
        do {
            return .success(try scanner.tick())
        } catch {
            return .failure(error)
        }
    }

    public static func parse(_ line: [UInt8]) -> Result<Tick, TickLineError> {
        line.withUnsafeBufferPointer { parse($0) }
    }

    public static func parse<S: StringProtocol>(_ line: S) -> Result<Tick, TickLineError> {
        var text = String(line)
        return text.withUTF8 { parse($0) }
    }
}

extension JSONTokenizer {
    /// Reads the whole line as a tick.
    mutating func tick() throws(TickLineError) -> Tick {
        var time: Int64?
        var symbol: String?
        var price: Double?
        var change24h: Double?
        var seenChange = false
        var source: String?
        var volume24h: Double?
        var seenVolume = false

        skipWhitespace()
        try expect(0x7B, "{")
        skipWhitespace()
        if peek == 0x7D {
            offset += 1
        } else {
            while true {
                skipWhitespace()
                let key = try scanKey()
                skipWhitespace()
                try expect(0x3A, ":")
                skipWhitespace()
                switch key {
                case .time:
                    guard time == nil else { throw .duplicate("time") }
                    time = try timeValue()
                case .symbol:
                    guard symbol == nil else { throw .duplicate("symbol") }
                    guard peek == 0x22 else { throw .badSymbol }
                    let (range, escaped) = try scanString()
                    symbol = string(range, escaped: escaped)
                case .price:
                    guard price == nil else { throw .duplicate("price") }
                    price = try priceValue()
                case .change24h:
                    guard !seenChange else { throw .duplicate("change24h") }
                    seenChange = true
                    change24h = try changeValue()
                case .source:
                    guard source == nil else { throw .duplicate("source") }
                    guard peek == 0x22 else { throw .badSource }
                    let (range, escaped) = try scanString()
                    let name = string(range, escaped: escaped)
                    guard SourceDefinition.isName(name) else { throw .badSource }
                    source = name
                case .volume24h:
                    guard !seenVolume else { throw .duplicate("volume24h") }
                    seenVolume = true
                    volume24h = try volumeValue()
                case .other:
                    try skipValue()
                }
                skipWhitespace()
                if peek == 0x2C {
                    offset += 1
                } else if peek == 0x7D {
                    offset += 1
                    break
                } else {
                    throw unexpected("expected ',' or '}'")
                }
            }
        }
        skipWhitespace()
        guard atEnd else { throw .syntax("unexpected text after the object", at: offset) }
        guard let time else { throw .missing("time") }
        guard let symbol else { throw .missing("symbol") }
        guard let price else { throw .missing("price") }
        return Tick(
            time: time, symbol: symbol, price: price, change24h: change24h, source: source, volume24h: volume24h)
    }

    enum TickKey {
        case time, symbol, price, change24h, source, volume24h, other
    }

    /// Scans a key and says which tick field it names. Keys written with escapes
    /// (`"pr\u0069ce"`) are unescaped first, as JSON requires.
    private mutating func scanKey() throws(TickLineError) -> TickKey {
        let (range, escaped) = try scanString()
        if escaped {
            let key = Self.unescape(UnsafeBufferPointer(rebasing: bytes[range]))
            return key.withUnsafeBufferPointer { JSONTokenizer($0).key(0..<key.count) }
        }
        return key(range)
    }

    private func key(_ range: Range<Int>) -> TickKey {
        switch range.count {
        case 4: return matches(range, "time") ? .time : .other
        case 5: return matches(range, "price") ? .price : .other
        case 6: return matches(range, "symbol") ? .symbol : matches(range, "source") ? .source : .other
        case 9: return matches(range, "change24h") ? .change24h : matches(range, "volume24h") ? .volume24h : .other
        default: return .other
        }
    }

    private mutating func timeValue() throws(TickLineError) -> Int64 {
        switch peek {
        case 0x22:
            let (range, escaped) = try scanString()
            let parsed =
                escaped
                ? Timestamp.parse(Self.unescape(UnsafeBufferPointer(rebasing: bytes[range])))
                : Timestamp.parse(UnsafeBufferPointer(rebasing: bytes[range]))
            guard let parsed else { throw .badTime }
            return parsed
        case 0x2D, 0x30...0x39:
            guard let millis = int64(try scanNumber()) else { throw .badTime }
            return millis
        default:
            throw .badTime
        }
    }

    private mutating func priceValue() throws(TickLineError) -> Double {
        switch peek {
        case 0x2D, 0x30...0x39:
            return double(try scanNumber())
        default:
            try skipValue()
            return .nan
        }
    }

    /// A finite number ≥ 0; any other value (valid JSON) is skipped and yields nil.
    private mutating func volumeValue() throws(TickLineError) -> Double? {
        switch peek {
        case 0x2D, 0x30...0x39:
            let volume = double(try scanNumber())
            return volume.isFinite && volume >= 0 ? volume : nil
        default:
            try skipValue()
            return nil
        }
    }

    private mutating func changeValue() throws(TickLineError) -> Double? {
        switch peek {
        case 0x2D, 0x30...0x39:
            return double(try scanNumber())
        case 0x6E:
            try skipLiteral("null")
            return nil
        default:
            throw .badChange
        }
    }
}
