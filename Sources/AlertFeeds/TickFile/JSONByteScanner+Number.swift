/// A JSON number as scanned: the decimal digits are kept as an integer significand and a
/// power-of-ten exponent so the common case converts with one exact multiply or divide.
struct ScannedNumber {
    /// The number's bytes in the line (for the slow, exact fallback).
    var range: Range<Int>
    var negative: Bool
    /// Significant decimal digits as an integer; meaningful only when `digitCount <= 19`.
    var significand: UInt64
    /// Number of significant digits (leading zeros excluded).
    var digitCount: Int
    /// value = significand × 10^exponent
    var exponent: Int
    /// No fraction and no exponent part.
    var isInteger: Bool
}

extension JSONByteScanner {
    /// Scans a number per the JSON grammar `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    mutating func scanNumber() throws(TickLineError) -> ScannedNumber {
        let start = offset
        var number = ScannedNumber(range: start..<start, negative: false, significand: 0, digitCount: 0,
                                   exponent: 0, isInteger: true)
        if peek == 0x2D {
            number.negative = true
            offset += 1
        }
        guard isDigit(peek) else { throw .syntax("invalid number", at: start) }
        if peek == 0x30 {
            offset += 1
        } else {
            while isDigit(peek) { accumulate(&number) }
        }
        if peek == 0x2E {
            number.isInteger = false
            offset += 1
            guard isDigit(peek) else { throw .syntax("invalid number", at: start) }
            while isDigit(peek) {
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
            guard isDigit(peek) else { throw .syntax("invalid number", at: start) }
            var e = 0
            while isDigit(peek) {
                if e < 1_000_000 { e = e * 10 + Int(peek &- 0x30) }  // beyond: ±inf or 0 anyway
                offset += 1
            }
            number.exponent += negativeExponent ? -e : e
        }
        number.range = start..<offset
        return number
    }

    @inline(__always)
    private func isDigit(_ c: UInt8) -> Bool { c &- 0x30 < 10 }

    @inline(__always)
    private mutating func accumulate(_ number: inout ScannedNumber) {
        let d = UInt64(bytes[offset] &- 0x30)
        offset += 1
        if number.digitCount == 0 && d == 0 { return }  // leading zero of a fraction
        if number.digitCount < 19 { number.significand = number.significand &* 10 &+ d }
        number.digitCount += 1
    }

    /// The correctly rounded Double, exactly what `Double(String)` gives for the same text.
    ///
    /// Clinger's fast path: when the significand fits in 53 bits and 10^|exponent| is exact
    /// (|exponent| ≤ 22), one IEEE multiply or divide rounds once, so the result is correctly
    /// rounded. Exponents a little above 22 are moved into the significand while it stays below
    /// 2^53. Everything else (more than 19 digits, huge or tiny exponents) goes to the standard
    /// library's correctly rounded parser.
    func double(_ n: ScannedNumber) -> Double {
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
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[n.range]), as: UTF8.self)
        return Double(text) ?? .nan
    }

    /// The integer value when the number is an integer that fits in 18 digits
    /// (far beyond any epoch-millisecond time), else nil.
    func int64(_ n: ScannedNumber) -> Int64? {
        guard n.isInteger, n.digitCount <= 18 else { return nil }
        let v = Int64(n.significand)
        return n.negative ? -v : v
    }

    static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    static let integerPowersOfTen: [UInt64] = (0...19).map { (0..<$0).reduce(UInt64(1)) { acc, _ in acc * 10 } }
}
