/// Durations in rule files: one or more `<integer><unit>`, unit `ms`, `s`, `m`, `h`, `d`
/// (`"90s"`, `"1h30m"`, `"1d"`), Docs/rules.md#rules.
public enum DurationText {
    /// What a duration text says: milliseconds, a well-formed duration too long for 64 bits,
    /// or no duration at all.
    public enum Reading: Sendable, Equatable {
        case millis(Int64)
        case tooLong
        case invalid
    }

    /// Milliseconds, or nil when `text` is not a duration (empty, no unit, unknown unit,
    /// sign, spaces, or too large for 64 bits).
    public static func parse(_ text: String) -> Int64? {
        if case .millis(let millis) = read(text) { return millis }
        return nil
    }

    /// Reads `text` to its end, so a duration that is merely too long is told apart from one
    /// that is misspelt (a limit is the better message for the first).
    public static func read(_ text: String) -> Reading {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return .invalid }
        var total: Int64 = 0
        var overflow = false
        var i = 0
        while i < bytes.count {
            var n: Int64 = 0
            let start = i
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 {
                let (m, o1) = n.multipliedReportingOverflow(by: 10)
                let (a, o2) = m.addingReportingOverflow(Int64(bytes[i] - 0x30))
                overflow = overflow || o1 || o2
                n = a
                i += 1
            }
            guard i > start, i < bytes.count else { return .invalid }
            let unit: Int64
            switch bytes[i] {
            case 0x6D: // m or ms
                if i + 1 < bytes.count, bytes[i + 1] == 0x73 { unit = 1; i += 1 } else { unit = 60_000 }
            case 0x73: unit = 1000
            case 0x68: unit = 3_600_000
            case 0x64: unit = 86_400_000
            default: return .invalid
            }
            i += 1
            let (v, o3) = n.multipliedReportingOverflow(by: unit)
            let (t, o4) = total.addingReportingOverflow(v)
            overflow = overflow || o3 || o4
            total = t
        }
        return overflow ? .tooLong : .millis(total)
    }

    /// Text for `millis` with hours as the largest unit (a day window reads `24h`, as users
    /// write it): `1h30m`, `24h`, 90 s → `1m30s`, `0s`.
    public static func format(_ millis: Int64) -> String {
        if millis == 0 { return "0s" }
        var rest = millis
        var out = ""
        for (unit, name) in [(Int64(3_600_000), "h"), (60_000, "m"), (1000, "s"), (1, "ms")] {
            let n = rest / unit
            if n > 0 {
                out += "\(n)\(name)"
                rest -= n * unit
            }
        }
        return out
    }
}
