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
    /// `volume24h` and `source` in one 128-bit word: the volume's bits in the low 64, bit 64 set
    /// when there is a volume, `sourceNumber` in the high 32.
    /// A tick is copied each time it is taken from an array (a batch of tick lines, a feed's
    /// frame, a `check` snapshot) to be handed to the engine. Swift 6.3 copies a struct of at most
    /// six scalar fields (a `String` counts two) inline, as one retain of its one string, and a
    /// larger one through its value witness at several times the cost, which the version 1
    /// replay cannot afford within the 5 % it may lose to version 3
    /// (Docs/performance.md#the-version-1-path-with-the-version-3-engine).
    @usableFromInline var extras: UInt128

    @inlinable
    public init(
        time: Int64, symbol: String, price: Double, change24h: Double? = nil, source: String? = nil,
        volume24h: Double? = nil
    ) {
        self.time = time
        self.symbol = symbol
        self.price = price
        self.change24h = change24h
        self.extras = 0
        if let source { self.source = source }
        if let volume24h { self.volume24h = volume24h }
    }

    @inlinable static var volumeFlag: UInt128 { 1 << 64 }
    @inlinable static var sourceShift: UInt128 { 96 }

    /// The traded volume of the last 24 hours in the quote currency, when the source reports one.
    @inlinable
    public var volume24h: Double? {
        get { extras & Self.volumeFlag == 0 ? nil : Double(bitPattern: UInt64(truncatingIfNeeded: extras)) }
        set {
            extras &= ~(Self.volumeFlag | UInt128(UInt64.max))
            if let newValue { extras |= Self.volumeFlag | UInt128(newValue.bitPattern) }
        }
    }

    /// The rule-file source the tick came from, nil for none (rules v3 §1).
    @inlinable
    public var source: String? {
        get { sourceNumber.name }
        set { sourceNumber = SourceNumber(newValue) }
    }

    /// `source` as its number: equal numbers, equal sources.
    @inlinable
    public var sourceNumber: SourceNumber {
        get { SourceNumber(value: UInt32(truncatingIfNeeded: extras >> Self.sourceShift)) }
        set {
            extras = extras & ~(UInt128(UInt32.max) << Self.sourceShift) | UInt128(newValue.value) << Self.sourceShift
        }
    }

    public static func == (a: Tick, b: Tick) -> Bool {
        a.time == b.time && a.symbol == b.symbol && a.price == b.price && a.change24h == b.change24h
            && a.volume24h == b.volume24h && a.sourceNumber == b.sourceNumber
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

extension Tick: CustomReflectable {
    /// The fields as declared in `init`, for `print`, `dump` and test failures.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "time": time, "symbol": symbol, "price": price, "change24h": change24h as Any,
                "source": source as Any, "volume24h": volume24h as Any
            ])
    }
}
