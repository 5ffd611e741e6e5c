/// The last price of each UTC minute for one symbol (Docs/rules.md#change-windows: "one price
/// per symbol per minute"), trimmed to what the longest change window needs.
///
/// The newest minute is kept in two scalars and reaches the arrays only when a later minute
/// begins, so the tick path writes no array while a minute lasts.
import AlertModel

struct MinuteHistory: Sendable {
    /// Closed minutes, oldest first, from `start` on.
    private(set) var minutes: [Int64] = []
    private(set) var prices: [Double] = []
    private var start = 0
    /// The newest minute seen and its last price so far.
    private var currentMinute = Int64.min
    private var currentPrice = 0.0
    /// The closed minute the last seeded tick older than `currentMinute` went into (see `insert`).
    private var insertedMinute = Int64.min

    init() {}

    /// Minutes that are let go at once from the front of the arrays.
    static let trimBatch = 256

    /// Takes over a history saved by `entries` (oldest first, the newest minute still open):
    /// the arrays are moved out of the caller's, not copied (they are empty afterwards).
    init(taking minutes: inout [Int64], _ prices: inout [Double]) {
        guard minutes.count == prices.count, !minutes.isEmpty else { return }
        swap(&self.minutes, &minutes)
        swap(&self.prices, &prices)
        currentMinute = self.minutes.removeLast()
        currentPrice = self.prices.removeLast()
    }

    /// Every kept minute and its last price, oldest first (the open minute last).
    var entries: (minutes: [Int64], prices: [Double]) {
        var copy = self
        return copy.takeEntries()
    }

    /// `entries`, moved out rather than copied: the history is empty afterwards.
    mutating func takeEntries() -> (minutes: [Int64], prices: [Double]) {
        var m: [Int64] = []
        var p: [Double] = []
        swap(&m, &minutes)
        swap(&p, &prices)
        if start > 0 {
            m.removeFirst(start)
            p.removeFirst(start)
        }
        if currentMinute != .min {
            m.append(currentMinute)
            p.append(currentPrice)
        }
        self = MinuteHistory()
        return (m, p)
    }

    /// Records `price` as the latest of minute `minute` (ticks arrive in time order per symbol).
    /// Inlined into the tick path: within a minute it is one comparison and one store.
    @inline(__always)
    mutating func record(minute: Int64, price: Double, keepMinutes: Int64) {
        if minute == currentMinute {
            currentPrice = price
        } else {
            begin(minute: minute, price: price, keepMinutes: keepMinutes)
        }
    }

    /// A later minute begins: the current one is closed into the arrays, and what no window
    /// can ask for any more is trimmed.
    @inline(never)
    private mutating func begin(minute: Int64, price: Double, keepMinutes: Int64) {
        // Only seeded history can be older than the newest minute (Docs/rules.md#seeded-history).
        if currentMinute != .min, minute < currentMinute {
            insert(minute: minute, price: price)
            return
        }
        if currentMinute != .min {
            if minutes.count >= Self.trimBatch, minutes.count >= min(minutes.capacity, prices.capacity) {
                // Past one trim batch, grown by a batch or an eighth rather than doubled: a
                // history at its full length then holds its window and about one batch more,
                // not up to twice it. Both arrays are looked at: malloc may give either a
                // little more room than asked, and the fuller one would otherwise double.
                let room = minutes.count + max(minutes.count / 8, Self.trimBatch)
                minutes.reserveCapacity(room)
                prices.reserveCapacity(room)
            }
            minutes.append(currentMinute)
            prices.append(currentPrice)
        }
        currentMinute = minute
        currentPrice = price
        // Keep the newest entry at or before the oldest minute any window can ask for.
        let oldest = minute - keepMinutes
        while start < minutes.count, (start + 1 < minutes.count ? minutes[start + 1] : currentMinute) <= oldest {
            start += 1
        }
        // In batches, so removing from the front moves each kept minute once a batch.
        if start >= Self.trimBatch {
            minutes.removeFirst(start)
            prices.removeFirst(start)
            start = 0
        }
    }

    /// A seeded tick older than the newest minute (history filled after live ticks): it goes
    /// into its minute, in time order, when that minute has no price yet; the seeded ticks that
    /// follow it in the same minute replace it (the last one is the minute's price, as in time
    /// order). A minute that already has a price keeps it.
    private mutating func insert(minute: Int64, price: Double) {
        var lo = start, hi = minutes.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if minutes[mid] < minute { lo = mid + 1 } else { hi = mid }
        }
        if lo < minutes.count, minutes[lo] == minute {
            if minute == insertedMinute { prices[lo] = price }
            return
        }
        minutes.insert(minute, at: lo)
        prices.insert(price, at: lo)
        insertedMinute = minute
    }

    /// The last price recorded in a minute at or before `minute`, or nil if none is kept.
    func price(atOrBefore minute: Int64) -> Double? {
        if currentMinute != .min, currentMinute <= minute { return currentPrice }
        var lo = start
        var hi = minutes.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if minutes[mid] <= minute { lo = mid + 1 } else { hi = mid }
        }
        return lo > start ? prices[lo - 1] : nil
    }
}
