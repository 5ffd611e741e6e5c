/// Epoch milliseconds <-> RFC 3339 text, without Foundation (the engine is pure and the tick
/// path must be fast).
public enum Timestamp {
    /// `2023-11-14T22:13:20.000Z`: UTC, always three fraction digits.
    public static func format(_ millis: Int64) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(24)
        append(millis, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `format(millis)`'s bytes to `out`.
    public static func append(_ millis: Int64, to out: inout [UInt8]) {
        out.write(atMost: maxLength) { write(millis, to: &$0) }
    }

    /// The longest text `format` makes: years of an `Int64` of milliseconds have at most 9
    /// digits and a sign, and the rest is 20 bytes.
    static let maxLength = 40

    /// Writes `format(millis)`'s bytes: at most `maxLength`.
    static func write(_ millis: Int64, to out: inout ReservedWriter) {
        let (days, msOfDay) = floorDivMod(millis, 86_400_000)
        let (y, m, d) = civilFromDays(days)
        let h = msOfDay / 3_600_000
        let mi = msOfDay / 60_000 % 60
        let s = msOfDay / 1000 % 60
        let ms = msOfDay % 1000
        guard (0...9999).contains(y) else {
            out.utf8("\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(h, 2)):\(pad(mi, 2)):\(pad(s, 2)).\(pad(ms, 3))Z")
            return
        }
        // The usual case: the 24 bytes of `YYYY-MM-DDTHH:MM:SS.mmmZ`, digit by digit.
        func put(_ value: Int64, _ width: Int, then separator: UInt8) {
            var value = value
            var i = width
            out.next[i] = separator
            while i > 0 {
                i -= 1
                out.next[i] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10)
                value /= 10
            }
            out.skip(width + 1)
        }
        put(y, 4, then: UInt8(ascii: "-"))
        put(m, 2, then: UInt8(ascii: "-"))
        put(d, 2, then: UInt8(ascii: "T"))
        put(h, 2, then: UInt8(ascii: ":"))
        put(mi, 2, then: UInt8(ascii: ":"))
        put(s, 2, then: UInt8(ascii: "."))
        put(ms, 3, then: UInt8(ascii: "Z"))
    }

    /// Parses RFC 3339 (`2023-11-14T22:13:20Z`, `...20.5+02:00`, lower-case `t`/`z`, or a space
    /// for `T`). Fractions beyond milliseconds are truncated. Returns nil when it is not one.
    public static func parse<C: Collection>(_ text: C) -> Int64? where C.Element == UInt8 {
        let b = Array(text)
        func digits(_ at: Int, _ n: Int) -> Int64? {
            guard at + n <= b.count else { return nil }
            var v: Int64 = 0
            for i in at..<(at + n) {
                let c = b[i]
                guard c >= 0x30, c <= 0x39 else { return nil }
                v = v * 10 + Int64(c - 0x30)
            }
            return v
        }
        guard b.count >= 20,
            let year = digits(0, 4), b[4] == 0x2D, let month = digits(5, 2), b[7] == 0x2D,
            let day = digits(8, 2), b[10] == 0x54 || b[10] == 0x74 || b[10] == 0x20,
            let hour = digits(11, 2), b[13] == 0x3A, let minute = digits(14, 2), b[16] == 0x3A,
            let second = digits(17, 2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
            hour < 24, minute < 60, second <= 60
        else { return nil }
        var i = 19
        var millis: Int64 = 0
        if i < b.count, b[i] == 0x2E {
            i += 1
            var n = 0
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 {
                if n < 3 { millis = millis * 10 + Int64(b[i] - 0x30) }
                n += 1
                i += 1
            }
            guard n > 0 else { return nil }
            if n < 3 { for _ in n..<3 { millis *= 10 } } // `n..<3` traps when n > 3
        }
        guard i < b.count else { return nil }
        var offset: Int64 = 0
        switch b[i] {
        case 0x5A, 0x7A:
            i += 1
        case 0x2B, 0x2D:
            guard let oh = digits(i + 1, 2), i + 3 < b.count, b[i + 3] == 0x3A,
                let om = digits(i + 4, 2), oh < 24, om < 60
            else { return nil }
            offset = (oh * 60 + om) * 60_000 * (b[i] == 0x2D ? -1 : 1)
            i += 6
        default:
            return nil
        }
        guard i == b.count else { return nil }
        let days = daysFromCivil(year, month, day)
        return days * 86_400_000 + hour * 3_600_000 + minute * 60_000 + min(second, 59) * 1000 + millis - offset
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    private static func pad(_ v: Int64, _ width: Int) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    /// Howard Hinnant's days-from-civil algorithm (proleptic Gregorian, day 0 = 1970-01-01).
    static func daysFromCivil(_ y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilFromDays(_ z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}

/// Floor division and modulo (the remainder has the divisor's sign), for times before 1970 too.
@inlinable
public func floorDivMod(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
    let q = a / b
    let r = a % b
    return r != 0 && (r < 0) != (b < 0) ? (q - 1, r + b) : (q, r)
}
