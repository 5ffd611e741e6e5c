/// The last price of each UTC minute for one symbol (spec §3: "one price per symbol per
/// minute"), trimmed to what the longest change window needs.
struct MinuteHistory: Sendable {
    private(set) var minutes: [Int64] = []
    private(set) var prices: [Double] = []
    private var start = 0

    /// Records `price` as the latest of minute `minute` (ticks arrive in time order per symbol).
    mutating func record(minute: Int64, price: Double, keepMinutes: Int64) {
        if minutes.count > start, minutes[minutes.count - 1] == minute {
            prices[prices.count - 1] = price
        } else {
            minutes.append(minute)
            prices.append(price)
        }
        // Keep the newest entry at or before the oldest minute any window can ask for.
        let oldest = minute - keepMinutes
        while start + 1 < minutes.count, minutes[start + 1] <= oldest { start += 1 }
        if start > 256, start * 2 > minutes.count {
            minutes.removeFirst(start)
            prices.removeFirst(start)
            start = 0
        }
    }

    /// The last price recorded in a minute at or before `minute`, or nil if none is kept.
    func price(atOrBefore minute: Int64) -> Double? {
        var lo = start
        var hi = minutes.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if minutes[mid] <= minute { lo = mid + 1 } else { hi = mid }
        }
        return lo > start ? prices[lo - 1] : nil
    }

    var isEmpty: Bool { minutes.count == start }
}
