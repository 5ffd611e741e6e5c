/// One price observation: `(time, source, symbol, price[, change24h][, volume24h])`
/// (Docs/rules.md#ticks).
///
/// `time` is Unix epoch milliseconds. `source` is the name of the rule-file source the tick
/// came from (rules v3 §1), nil for `--source` and for tick lines without one. `change24h` is
/// the source's own 24-hour change in percent (already ×100), when the source reports one; it
/// feeds `change` rules whose window is exactly 24 hours (Docs/rules.md#change-windows).
/// `volume24h` is the traded volume of the last 24 hours in the quote currency (finite, ≥ 0).
public struct Tick: Sendable, Equatable {
    public var time: Int64
    public var symbol: String
    public var price: Double
    public var change24h: Double?
    public var source: String?
    public var volume24h: Double?

    public init(
        time: Int64, symbol: String, price: Double, change24h: Double? = nil, source: String? = nil,
        volume24h: Double? = nil
    ) {
        self.time = time
        self.symbol = symbol
        self.price = price
        self.change24h = change24h
        self.source = source
        self.volume24h = volume24h
    }

    /// What the engine keeps state under (rules v3 §1): the upper-cased symbol without a
    /// source, `source:SYMBOL` with one.
    public var key: String {
        guard let source else { return Symbol.normalize(symbol) }
        return Self.key(source: source, symbol: symbol)
    }

    /// The key of `symbol`'s ticks from `source`: the source as written, `:`, the symbol
    /// upper-cased. Rule entries name keys the same way (`source:SYMBOL`).
    public static func key(source: some StringProtocol, symbol: some StringProtocol) -> String {
        source + ":" + Symbol.normalize(String(symbol))
    }
}

extension Tick {
    /// Why `symbol` cannot name a market (`empty-symbol`, `control-character`), or nil. Every
    /// tick, whichever source or file it came from, passes this check in the engine before it
    /// changes any state, so a new source needs no check of its own.
    @inlinable
    public var symbolFault: DropReason? {
        if symbol.isEmpty { return .emptySymbol }
        return Symbol.hasControlCharacter(symbol) ? .controlCharacter : nil
    }
}

/// Why a tick was dropped. Dropped ticks change no state (Docs/rules.md#ticks).
public enum DropReason: String, Sendable, CaseIterable, Comparable {
    /// The line or frame could not be read as a tick at all (not JSON, missing fields, bad types).
    case malformed
    /// `price` is not a finite number greater than zero.
    case invalidPrice = "invalid-price"
    /// `symbol` is empty.
    case emptySymbol = "empty-symbol"
    /// `symbol` holds a control character (C0, DEL or C1): feed text that could split a line
    /// where the symbol is printed, cut an environment variable or break a header.
    case controlCharacter = "control-character"
    /// `time` is earlier than the previous valid tick of the same symbol.
    case outOfOrder = "out-of-order"
    /// The symbol starts with `@`, which only a portfolio's own ticks do (when rules define portfolios).
    case portfolioSymbol = "portfolio-symbol"
    /// A live tick's time is further ahead of the local clock than `--max-tick-skew`
    /// (Docs/rules.md#ticks-from-the-future): taken, it would make every later tick of its
    /// symbol out of order.
    case aheadOfClock = "ahead-of-clock"

    public static func < (a: DropReason, b: DropReason) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}
