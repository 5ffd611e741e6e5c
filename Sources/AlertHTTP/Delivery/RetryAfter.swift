/// The `Retry-After` response header (RFC 9110 §10.2.3).
public enum RetryAfter {
    /// The longest wait honoured: one hour. A server asking for more is treated as asking for an
    /// hour, so one misbehaving endpoint cannot park an alert for days; the retry stage decides
    /// whether to give up before that.
    public static let cap: Int64 = 3_600_000

    /// Milliseconds to wait before retrying, from `header` received at `now` (epoch ms).
    ///
    /// Accepts delta-seconds (`120`) and an IMF-fixdate (`Wed, 21 Oct 2015 07:28:00 GMT`).
    /// Returns nil for a missing, malformed or negative value and for a date not after `now`
    /// (the server gives no usable wait: the caller's own backoff applies). Values above `cap`
    /// are lowered to `cap`.
    public static func delay(from header: String?, now: Int64) -> Int64? {
        guard let header else { return nil }
        let text = Array(
            header.utf8.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed())
        guard !text.isEmpty else { return nil }
        let delay: Int64
        if text.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            // More than 10 digits is beyond any cap; keep the arithmetic from overflowing.
            guard text.count <= 10, let seconds = Int64(String(decoding: text, as: UTF8.self)) else { return cap }
            delay = seconds * 1000
        } else {
            guard let date = IMFFixdate.epochMilliseconds(text) else { return nil }
            delay = date - now
            guard delay > 0 else { return nil }
        }
        return min(delay, cap)
    }
}

/// `Sun, 06 Nov 1994 08:49:37 GMT`, the one date format HTTP senders must produce. The obsolete
/// RFC 850 and asctime forms are not accepted.
enum IMFFixdate {
    private static let days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func epochMilliseconds(_ text: [UInt8]) -> Int64? {
        // "Www, DD Mmm YYYY HH:MM:SS GMT" is exactly 29 bytes.
        guard text.count == 29,
            days.contains(String(decoding: text[0..<3], as: UTF8.self)),
            String(decoding: text[3..<5], as: UTF8.self) == ", ", text[7] == 0x20, text[11] == 0x20,
            text[16] == 0x20, text[19] == 0x3A, text[22] == 0x3A,
            String(decoding: text[25..<29], as: UTF8.self) == " GMT",
            let day = number(text[5..<7]), let year = number(text[12..<16]),
            let monthIndex = months.firstIndex(of: String(decoding: text[8..<11], as: UTF8.self)),
            let hour = number(text[17..<19]), let minute = number(text[20..<22]), let second = number(text[23..<25]),
            day >= 1, day <= 31, hour < 24, minute < 60, second < 61
        else { return nil }
        let dayCount = daysFromCivil(year: year, month: Int64(monthIndex) + 1, day: day)
        return ((dayCount * 24 + hour) * 60 + minute) * 60_000 + min(second, 59) * 1000
    }

    private static func number(_ digits: ArraySlice<UInt8>) -> Int64? {
        var value: Int64 = 0
        for d in digits {
            guard d >= 0x30, d <= 0x39 else { return nil }
            value = value * 10 + Int64(d - 0x30)
        }
        return value
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's `days_from_civil`).
    private static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
