/// A JSON number as taken: the decimal digits kept as an integer significand and a power-of-ten
/// exponent, so that the common case converts with one exact multiply or divide.
@frozen
public struct JSONNumber: Sendable {
    /// The number's bytes (for its text, and for the exact fallback).
    public var range: Range<Int>
    public var negative: Bool
    /// Significant decimal digits as an integer; meaningful only when `digitCount <= 19`.
    public var significand: UInt64
    /// Number of significant digits (leading zeros excluded).
    public var digitCount: Int
    /// value = significand × 10^exponent
    public var exponent: Int
    /// No fraction and no exponent part.
    public var isInteger: Bool

    @inlinable
    init(at start: Int) {
        range = start..<start
        negative = false
        significand = 0
        digitCount = 0
        exponent = 0
        isInteger = true
    }
}

extension JSONTokenizer {
    /// Takes the number at the cursor per `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`. It
    /// ends where that grammar does: a digit after a leading `0` is the caller's to judge.
    @inlinable
    public mutating func number() throws(JSONTokenError) -> JSONNumber {
        let start = offset
        var number = JSONNumber(at: start)
        if peek == 0x2D {
            number.negative = true
            offset += 1
        }
        guard Self.isDigit(peek) else { throw JSONTokenError(.digitExpected(.afterMinus, start: start), at: offset) }
        if peek == 0x30 {
            offset += 1
        } else {
            while Self.isDigit(peek) { accumulate(&number) }
        }
        if peek == 0x2E {
            number.isInteger = false
            offset += 1
            guard Self.isDigit(peek) else {
                throw JSONTokenError(.digitExpected(.afterPoint, start: start), at: offset)
            }
            while Self.isDigit(peek) {
                accumulate(&number)
                number.exponent -= 1
            }
        }
        if peek == 0x65 || peek == 0x45 {
            number.isInteger = false
            offset += 1
            var negativeExponent = false
            if peek == 0x2B || peek == 0x2D {
                negativeExponent = peek == 0x2D
                offset += 1
            }
            guard Self.isDigit(peek) else {
                throw JSONTokenError(.digitExpected(.inExponent, start: start), at: offset)
            }
            var e = 0
            while Self.isDigit(peek) {
                if e < 1_000_000 { e = e * 10 + Int(peek &- 0x30) } // beyond: ±inf or 0 anyway
                offset += 1
            }
            number.exponent += negativeExponent ? -e : e
        }
        number.range = start..<offset
        return number
    }

    @inlinable @inline(__always)
    public static func isDigit(_ c: UInt8) -> Bool { c &- 0x30 < 10 }

    @inlinable @inline(__always)
    mutating func accumulate(_ number: inout JSONNumber) {
        let d = UInt64(bytes[offset] &- 0x30)
        offset += 1
        if number.digitCount == 0 && d == 0 { return } // leading zero of a fraction
        if number.digitCount < 19 { number.significand = number.significand &* 10 &+ d }
        number.digitCount += 1
    }

    /// The correctly rounded Double, exactly what `Double(String)` gives for the same text
    /// (±infinity beyond the Double range).
    ///
    /// Clinger's fast path: when the significand fits in 53 bits and 10^|exponent| is exact
    /// (|exponent| ≤ 22), one IEEE multiply or divide rounds once, so the result is correctly
    /// rounded. Exponents a little above 22 are moved into the significand while it stays below
    /// 2^53. Everything else (more than 19 digits, huge or tiny exponents) goes to the standard
    /// library's correctly rounded parser.
    @inlinable
    public func double(_ n: JSONNumber) -> Double {
        if n.digitCount <= 19 {
            if n.significand == 0 { return n.negative ? -0.0 : 0.0 }
            let limit: UInt64 = 1 << 53
            if n.significand <= limit {
                var value: Double?
                if n.exponent >= -22 && n.exponent <= 22 {
                    let m = Double(n.significand)
                    value = n.exponent < 0 ? m / Self.powersOfTen[-n.exponent] : m * Self.powersOfTen[n.exponent]
                } else if n.exponent > 22 && n.exponent <= 22 + 15 {
                    let (shifted, overflow) = n.significand.multipliedReportingOverflow(
                        by: Self.integerPowersOfTen[n.exponent - 22])
                    if !overflow && shifted <= limit { value = Double(shifted) * 1e22 }
                }
                if let value { return n.negative ? -value : value }
            }
        }
        return Double(text(n.range)) ?? .nan
    }

    /// The integer value when the number is an integer that fits in 18 digits
    /// (far beyond any epoch-millisecond time), else nil.
    @inlinable
    public func int64(_ n: JSONNumber) -> Int64? {
        guard n.isInteger, n.digitCount <= 18 else { return nil }
        let v = Int64(n.significand)
        return n.negative ? -v : v
    }

    /// The bytes of `range` as text (a number as written, a word).
    @inlinable
    public func text(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    @usableFromInline
    static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
    ]

    @usableFromInline
    static let integerPowersOfTen: [UInt64] = (0...19).map { (0..<$0).reduce(UInt64(1)) { acc, _ in acc * 10 } }
}
