/// One entry of an exchange's market list (for BTSE, one element of `initial/market`'s `data`).
public struct Market: Sendable, Equatable {
    /// The join key: a tick's symbol is joined to the entries whose `symbol` equals it.
    public var symbol: String
    public var name: String
    public var base: String
    public var quote: String
    public var future: Bool
    public var active: Bool

    public init(symbol: String, name: String = "", base: String, quote: String, future: Bool, active: Bool) {
        self.symbol = symbol
        self.name = name
        self.base = base
        self.quote = quote
        self.future = future
        self.active = active
    }
}

/// The market list with entries grouped by upper-cased symbol (Docs/rules.md#scope).
public struct MarketList: Sendable {
    public private(set) var markets: [Market]
    private var bySymbol: [String: [Int]]

    public init(_ markets: [Market]) {
        self.markets = markets
        var index: [String: [Int]] = [:]
        for (i, market) in markets.enumerated() {
            index[Symbol.normalize(market.symbol), default: []].append(i)
        }
        self.bySymbol = index
    }

    /// Market entries joined to `symbol` (case-insensitively).
    public func entries(for symbol: String) -> [Market] {
        guard let indices = bySymbol[Symbol.normalize(symbol)] else { return [] }
        return indices.map { markets[$0] }
    }

    public var count: Int { markets.count }
}

/// A `match` scope: every key given must hold for a market entry (Docs/rules.md#scope).
public struct MarketFilter: Sendable, Equatable {
    public var future: Bool?
    public var quote: String?
    public var base: String?
    public var active: Bool?
    /// `source` (rules v3 §3): the rule applies only to ticks of these sources; nil applies it
    /// to every source's ticks (each matched in its own source's market list) and to ticks
    /// without a source. The filter on market entries (`matches`) does not read it.
    public var sources: [String]?

    public init(
        future: Bool? = nil, quote: String? = nil, base: String? = nil, active: Bool? = nil, sources: [String]? = nil
    ) {
        self.future = future
        self.quote = quote
        self.base = base
        self.active = active
        self.sources = sources
    }

    public func matches(_ market: Market) -> Bool {
        if let future, market.future != future { return false }
        if let active, market.active != active { return false }
        if let quote, Symbol.normalize(market.quote) != Symbol.normalize(quote) { return false }
        if let base, Symbol.normalize(market.base) != Symbol.normalize(base) { return false }
        return true
    }
}

/// Symbols compare case-insensitively: both sides are upper-cased (Docs/rules.md#scope).
public enum Symbol {
    /// Upper-cases `s`, returning it unchanged (no allocation) when it is already upper case.
    @inlinable
    public static func normalize(_ s: String) -> String {
        let needsWork =
            s.utf8.withContiguousStorageIfAvailable { bytes in
                bytes.contains { ($0 >= 0x61 && $0 <= 0x7A) || $0 >= 0x80 }
            } ?? s.utf8.contains { ($0 >= 0x61 && $0 <= 0x7A) || $0 >= 0x80 }
        return needsWork ? s.uppercased() : s
    }

    /// Whether `s` holds a control character: C0 (U+0000–U+001F), DEL (U+007F) or C1
    /// (U+0080–U+009F, UTF-8 `C2 80`–`C2 9F`).
    @inlinable
    public static func hasControlCharacter(_ s: String) -> Bool {
        func scan<C: Collection>(_ bytes: C) -> Bool where C.Element == UInt8 {
            var afterC2 = false
            for byte in bytes {
                if byte < 0x20 || byte == 0x7F || (afterC2 && byte <= 0x9F) { return true }
                afterC2 = byte == 0xC2
            }
            return false
        }
        return s.utf8.withContiguousStorageIfAvailable(scan) ?? scan(s.utf8)
    }
}
