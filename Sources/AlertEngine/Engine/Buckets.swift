/// One symbol's history in buckets of one size (a UTC minute or hour): per bucket its last
/// price, highest and lowest (Docs/rules.md#change-windows, #highs-and-lows), oldest first,
/// trimmed to what the longest window of that size needs.
import AlertModel

struct Buckets: Sendable, Equatable {
    /// Bucket numbers (epoch time / size, rounded down), ascending.
    private(set) var keys: [Int64] = []
    private(set) var last: [Double] = []
    private(set) var high: [Double] = []
    private(set) var low: [Double] = []

    init() {}

    init(keys: [Int64], last: [Double], high: [Double], low: [Double]) {
        self.keys = keys
        self.last = last
        self.high = high
        self.low = low
    }

    var isEmpty: Bool { keys.isEmpty }

    /// Records `price` in bucket `key`. `latest`: the tick is the symbol's newest so far, so its
    /// price becomes the bucket's last one. An older tick (seeded history arriving after newer
    /// ticks, in time order) counts for the bucket's high and low; it is the bucket's last price
    /// only when it opens the bucket or follows seeded ticks that opened it (`seeded`: the bucket
    /// the last older tick opened, kept by the caller), so the last seeded tick of a bucket that
    /// had no price is its price and a bucket that had one keeps it. `keep` buckets before `key`
    /// stay (plus the newest one at or before them).
    mutating func record(key: Int64, price: Double, latest: Bool, keep: Int64, seeded: inout Int64?) {
        if latest { seeded = nil }
        if let newest = keys.last, key <= newest {
            let i = index(atOrBefore: key)
            if let i, keys[i] == key {
                if latest || key == seeded { last[i] = price }
                high[i] = max(high[i], price)
                low[i] = min(low[i], price)
            } else {
                let at = (i ?? -1) + 1
                keys.insert(key, at: at)
                last.insert(price, at: at)
                high.insert(price, at: at)
                low.insert(price, at: at)
                if !latest { seeded = key }
            }
            return
        }
        keys.append(key)
        last.append(price)
        high.append(price)
        low.append(price)
        trim(before: key - keep)
    }

    /// Drops every bucket before the newest one at or before `oldest`.
    private mutating func trim(before oldest: Int64) {
        guard let i = index(atOrBefore: oldest), i > 0 else { return }
        // Removing from the front is linear: do it in batches, not on every new bucket.
        guard i >= 64 || i * 2 >= keys.count else { return }
        keys.removeFirst(i)
        last.removeFirst(i)
        high.removeFirst(i)
        low.removeFirst(i)
    }

    /// The index of the newest bucket at or before `key`.
    func index(atOrBefore key: Int64) -> Int? {
        var lo = 0, hi = keys.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if keys[mid] <= key { lo = mid + 1 } else { hi = mid }
        }
        return lo > 0 ? lo - 1 : nil
    }

    /// The last price of the newest bucket at or before `key`.
    func price(atOrBefore key: Int64) -> Double? {
        index(atOrBefore: key).map { last[$0] }
    }

    /// The highest (or lowest) price of the buckets from `key` on.
    func extreme(from key: Int64, high wantHigh: Bool) -> Double? {
        var i = (index(atOrBefore: key - 1) ?? -1) + 1
        guard i < keys.count else { return nil }
        var best = wantHigh ? high[i] : low[i]
        i += 1
        while i < keys.count {
            best = wantHigh ? max(best, high[i]) : min(best, low[i])
            i += 1
        }
        return best
    }
}
