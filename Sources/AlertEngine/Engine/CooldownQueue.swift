/// Pairs whose level condition holds while they cool down, ordered by the time their cooldown
/// ends: a binary min-heap, so a tick pays only for the pairs that become due, not for every
/// pair that waits.
import AlertModel

struct CooldownQueue: Sendable {
    private var due: [Int64] = []
    private var pairs: [Int32] = []

    /// When the first pair is due, if any.
    var nextDue: Int64? { due.first }

    mutating func push(pair: Int32, due time: Int64) {
        due.append(time)
        pairs.append(pair)
        var i = due.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard due[i] < due[parent] else { break }
            due.swapAt(i, parent)
            pairs.swapAt(i, parent)
            i = parent
        }
    }

    /// Removes and returns the pair whose cooldown ends first, if it ends at or before `time`.
    mutating func popDue(at time: Int64) -> Int32? {
        guard let first = due.first, first <= time else { return nil }
        let pair = pairs[0]
        let last = due.count - 1
        due.swapAt(0, last)
        pairs.swapAt(0, last)
        due.removeLast()
        pairs.removeLast()
        var i = 0
        while true {
            let l = 2 * i + 1
            let r = l + 1
            var m = i
            if l < due.count, due[l] < due[m] { m = l }
            if r < due.count, due[r] < due[m] { m = r }
            guard m != i else { break }
            due.swapAt(i, m)
            pairs.swapAt(i, m)
            i = m
        }
        return pair
    }
}
