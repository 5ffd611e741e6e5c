import AlertModel

/// One key's history in buckets of one size (a UTC minute or hour), the one history type of
/// `KeyState`: per bucket its last price (Docs/rules.md#change-windows: "one price per symbol
/// per minute") and, when a rule reads them (`keepsExtremes`), its highest and lowest
/// (#highs-and-lows); oldest first, trimmed to what the longest window of that size needs.
///
/// The newest bucket is kept in plain fields and reaches the arrays only when a later bucket
/// begins, so the tick path writes no array while a bucket lasts.
struct Buckets: Sendable {
    // The open bucket comes first: a tick within it touches only these fields (stored
    // properties are laid out in the order written; see `KeyState`).
    /// The newest bucket (`Int64.min`: none yet), its last price, high and low so far.
    private var currentKey = Int64.min
    private var currentLast = 0.0
    private var currentHigh = 0.0
    private var currentLow = 0.0
    /// Closed buckets from `start` on: bucket numbers (epoch time / size, rounded down),
    /// ascending, and their last price; their highs and lows when `keepsExtremes`.
    private(set) var keys: [Int64] = []
    private(set) var last: [Double] = []
    private var high: [Double] = []
    private var low: [Double] = []
    private var start = 0
    /// The bucket the last older tick opened (`record`); `Int64.min`: none since the last
    /// newest tick. Not saved: it matters only while one backfill's ticks arrive.
    private var seeded = Int64.min
    /// Highs and lows are kept (a rule evaluated pair by pair may read them).
    let keepsExtremes: Bool

    init(keepsExtremes: Bool = false) {
        self.keepsExtremes = keepsExtremes
    }

    /// Buckets `keys` with their prices (oldest first, the newest still open) and, when
    /// `keepsExtremes`, highs and lows (empty: each bucket's last price). The arrays are moved
    /// out of the caller's (empty afterwards).
    init(
        taking keys: inout [Int64], last: inout [Double], high: inout [Double], low: inout [Double],
        keepsExtremes: Bool
    ) {
        self.keepsExtremes = keepsExtremes
        guard keys.count == last.count, !keys.isEmpty else { return }
        if keepsExtremes, high.count != keys.count || low.count != keys.count {
            high = last
            low = last
        }
        swap(&self.keys, &keys)
        swap(&self.last, &last)
        currentKey = self.keys.removeLast()
        currentLast = self.last.removeLast()
        currentHigh = currentLast
        currentLow = currentLast
        if keepsExtremes {
            swap(&self.high, &high)
            swap(&self.low, &low)
            currentHigh = self.high.removeLast()
            currentLow = self.low.removeLast()
        }
    }

    /// Saved buckets with highs and lows.
    init(keys: [Int64], last: [Double], high: [Double], low: [Double]) {
        var (k, l, h, w) = (keys, last, high, low)
        self.init(taking: &k, last: &l, high: &h, low: &w, keepsExtremes: true)
    }

    /// The same buckets keeping highs and lows or not (`keep`); highs and lows that were not
    /// kept are each bucket's last price.
    func keepingExtremes(_ keep: Bool) -> Buckets {
        guard keep != keepsExtremes else { return self }
        var e = entries
        return Buckets(taking: &e.keys, last: &e.last, high: &e.high, low: &e.low, keepsExtremes: keep)
    }

    var isEmpty: Bool { currentKey == .min }

    /// Every kept bucket, oldest first (the open one last): highs and lows empty unless kept.
    var entries: (keys: [Int64], last: [Double], high: [Double], low: [Double]) {
        var copy = self
        return copy.takeEntries()
    }

    /// `entries`, moved out rather than copied: the buckets are empty afterwards.
    mutating func takeEntries() -> (keys: [Int64], last: [Double], high: [Double], low: [Double]) {
        var k: [Int64] = [], l: [Double] = [], h: [Double] = [], w: [Double] = []
        swap(&k, &keys)
        swap(&l, &last)
        swap(&h, &high)
        swap(&w, &low)
        if start > 0 {
            k.removeFirst(start)
            l.removeFirst(start)
            if keepsExtremes {
                h.removeFirst(start)
                w.removeFirst(start)
            }
        }
        if currentKey != .min {
            k.append(currentKey)
            l.append(currentLast)
            if keepsExtremes {
                h.append(currentHigh)
                w.append(currentLow)
            }
        }
        self = Buckets(keepsExtremes: keepsExtremes)
        return (k, l, h, w)
    }

    /// Closed buckets let go at once from the front of the arrays.
    static let trimBatch = 256

    /// Records `price` in bucket `key`. `latest`: the tick is the key's newest so far, so its
    /// price becomes the bucket's last one. An older tick (seeded history arriving after newer
    /// ticks, in time order) counts for the bucket's high and low; it is the bucket's last price
    /// only when it opens the bucket or follows seeded ticks that opened it, so the last seeded
    /// tick of a bucket that had no price is its price and a bucket that had one keeps it.
    /// `keep` buckets before `key` stay (plus the newest one at or before them). Inlined into
    /// the tick path: within a bucket of a history without highs and lows it is two
    /// comparisons and two stores; the rest is out of line, so the inlined copies stay small.
    @inline(__always)
    mutating func record(key: Int64, price: Double, latest: Bool, keep: Int64) {
        if latest, key == currentKey, !keepsExtremes {
            seeded = .min
            currentLast = price
        } else {
            begin(key: key, price: price, latest: latest, keep: keep)
        }
    }

    @inline(never)
    private mutating func begin(key: Int64, price: Double, latest: Bool, keep: Int64) {
        if latest { seeded = .min }
        if currentKey != .min, key <= currentKey {
            older(key: key, price: price, latest: latest)
            return
        }
        if currentKey != .min {
            if keys.count >= Self.trimBatch, keys.count >= min(keys.capacity, last.capacity) {
                // Past one trim batch, grown by a batch or an eighth rather than doubled: a
                // history at its full length then holds its window and about one batch more,
                // not up to twice it. Every array is looked at: malloc may give one a little
                // more room than asked, and the fuller one would otherwise double.
                let room = keys.count + max(keys.count / 8, Self.trimBatch)
                keys.reserveCapacity(room)
                last.reserveCapacity(room)
                if keepsExtremes {
                    high.reserveCapacity(room)
                    low.reserveCapacity(room)
                }
            }
            keys.append(currentKey)
            last.append(currentLast)
            if keepsExtremes {
                high.append(currentHigh)
                low.append(currentLow)
            }
        }
        if !latest { seeded = key }
        currentKey = key
        currentLast = price
        currentHigh = price
        currentLow = price
        // Keep the newest bucket at or before the oldest one any window can ask for.
        let oldest = key - keep
        while start < keys.count, (start + 1 < keys.count ? keys[start + 1] : currentKey) <= oldest {
            start += 1
        }
        // In batches, so removing from the front moves each kept bucket once a batch.
        if start >= Self.trimBatch {
            keys.removeFirst(start)
            last.removeFirst(start)
            if keepsExtremes {
                high.removeFirst(start)
                low.removeFirst(start)
            }
            start = 0
        }
    }

    /// A tick in the newest bucket (the newest tick of a history with highs and lows, or an
    /// older one), or in an older bucket.
    private mutating func older(key: Int64, price: Double, latest: Bool) {
        if key == currentKey {
            if latest || key == seeded { currentLast = price }
            if keepsExtremes {
                currentHigh = max(currentHigh, price)
                currentLow = min(currentLow, price)
            }
            return
        }
        let i = closedIndex(atOrBefore: key)
        if let i, keys[i] == key {
            if latest || key == seeded { last[i] = price }
            if keepsExtremes {
                high[i] = max(high[i], price)
                low[i] = min(low[i], price)
            }
            return
        }
        let at = (i ?? start - 1) + 1
        keys.insert(key, at: at)
        last.insert(price, at: at)
        if keepsExtremes {
            high.insert(price, at: at)
            low.insert(price, at: at)
        }
        if !latest { seeded = key }
    }

    /// The index of the newest closed bucket at or before `key`.
    private func closedIndex(atOrBefore key: Int64) -> Int? {
        var lo = start, hi = keys.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if keys[mid] <= key { lo = mid + 1 } else { hi = mid }
        }
        return lo > start ? lo - 1 : nil
    }

    /// The last price of the newest bucket at or before `key`, or nil if none is kept.
    func price(atOrBefore key: Int64) -> Double? {
        if currentKey != .min, currentKey <= key { return currentLast }
        return closedIndex(atOrBefore: key).map { last[$0] }
    }

    /// The highest (or lowest) price of the buckets from `key` on (the last prices when
    /// highs and lows are not kept).
    func extreme(from key: Int64, high wantHigh: Bool) -> Double? {
        guard currentKey != .min, currentKey >= key else { return nil }
        var best = keepsExtremes ? (wantHigh ? currentHigh : currentLow) : currentLast
        var i = (closedIndex(atOrBefore: key - 1) ?? start - 1) + 1
        while i < keys.count {
            let h = keepsExtremes ? high[i] : last[i]
            let l = keepsExtremes ? low[i] : last[i]
            best = wantHigh ? max(best, h) : min(best, l)
            i += 1
        }
        return best
    }

    /// The last prices of `history` (oldest first) added where these buckets have none, each
    /// its own high and low: a saved state's minute history and minute buckets made one.
    func merging(_ history: (minutes: [Int64], prices: [Double])) -> Buckets {
        guard !history.minutes.isEmpty else { return self }
        let e = entries
        var k: [Int64] = [], l: [Double] = [], h: [Double] = [], w: [Double] = []
        func add(_ key: Int64, _ price: Double, _ high: Double, _ low: Double) {
            k.append(key)
            l.append(price)
            if keepsExtremes {
                h.append(high)
                w.append(low)
            }
        }
        var i = 0, j = 0
        while i < e.keys.count || j < history.minutes.count {
            if j == history.minutes.count || (i < e.keys.count && e.keys[i] <= history.minutes[j]) {
                if j < history.minutes.count, e.keys[i] == history.minutes[j] { j += 1 }
                add(e.keys[i], e.last[i], keepsExtremes ? e.high[i] : 0, keepsExtremes ? e.low[i] : 0)
                i += 1
            } else {
                add(history.minutes[j], history.prices[j], history.prices[j], history.prices[j])
                j += 1
            }
        }
        return Buckets(taking: &k, last: &l, high: &h, low: &w, keepsExtremes: keepsExtremes)
    }
}

extension Buckets: Equatable {
    /// The same buckets, prices, highs and lows (those not kept are the last prices).
    static func == (a: Buckets, b: Buckets) -> Bool {
        let x = a.keepingExtremes(true).entries
        let y = b.keepingExtremes(true).entries
        return x.keys == y.keys && x.last == y.last && x.high == y.high && x.low == y.low
    }
}
