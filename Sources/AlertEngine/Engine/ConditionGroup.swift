import AlertModel

/// All (rule, symbol) pairs of one symbol that read the same coordinate: the price, or the
/// change over one window. Their key levels (where a pair fires, where it re-arms) are kept
/// sorted, so when the coordinate moves from `old` to `new` only the pairs with a level in
/// `[min, max]` can change state; every other pair's outcome is the same as at the previous
/// evaluation (see `CompiledCondition`). The one exception, pairs whose level condition holds
/// while they cool down, waits in a `CooldownQueue` and is looked at again when its cooldown
/// ends (in between, any change of its condition is a level crossing and is visited anyway).
///
/// The group remembers where the coordinate sits among its levels (`cursor`) and the two
/// levels around it (`gateBelow`, `gateAtOrAbove`): a tick that crosses no level touches only
/// this struct, so a tick costs about the same with 100 rules or 1 000 000.
struct ConditionGroup: Sendable {
    enum Coordinate: Sendable, Equatable {
        case price
        /// Window in milliseconds.
        case change(window: Int64)
    }

    /// One (rule, symbol) pair: what firing and re-arming (Docs/rules.md) need, kept together.
    /// Laid out to pack (a daemon may hold 100 000): the flags sit in the condition's tail
    /// padding and the last firing time needs no optional's extra byte: 48 bytes, not 64.
    struct Pair: Sendable {
        let condition: CompiledCondition
        let once: Bool
        var armed = true
        /// Fired with `repeat: once`: never fires or re-arms again.
        var spent = false
        /// Waiting in the cooldown queue.
        var pending = false
        private var fired = false
        /// The rule's index in the engine's rule list (its evaluation order).
        let rule: Int32
        /// The tick stamp of the last evaluation, so a pair is evaluated once per tick.
        var stamp: UInt32 = 0
        let cooldown: Int64
        private var firedAt: Int64 = 0

        init(rule: Int32, condition: CompiledCondition, cooldown: Int64, once: Bool) {
            self.rule = rule
            self.condition = condition
            self.cooldown = cooldown
            self.once = once
        }

        var lastFired: Int64? {
            get { fired ? firedAt : nil }
            set {
                fired = newValue != nil
                firedAt = newValue ?? 0
            }
        }
    }

    // What every tick reads comes first, so it shares as few cache lines as possible.
    /// `levels[cursor - 1] < value <= levels[cursor]`, with ±infinity past the ends.
    private var gateBelow = -Double.infinity
    private var gateAtOrAbove = Double.infinity
    /// The coordinate at the last evaluation; nil until it is first known.
    private(set) var value: Double?
    /// When the first pair in `cooling` is due; `Int64.max` when none is.
    private var nextDue = Int64.max
    let coordinate: Coordinate
    /// A change window in whole minutes (0 for the price), so the tick path divides nothing.
    let windowMinutes: Int64
    /// For change groups: `base` (Docs/rules.md#change-windows) and the minute it was taken for.
    var base: (minute: Int64, price: Double)?

    // What a tick reads only when the coordinate passes a level.
    private var cursor = 0
    private(set) var pairs: [Pair] = []
    /// Every pair's fire and re-arm levels, sorted; a level and its pair share a cache line.
    private var levels: [Level] = []
    private var cooling = CooldownQueue()

    struct Level: Sendable {
        let value: Double
        let pair: Int32
    }

    init(coordinate: Coordinate) {
        self.coordinate = coordinate
        if case .change(let window) = coordinate { windowMinutes = window / 60_000 } else { windowMinutes = 0 }
    }

    /// Room for `count` pairs, before adding them.
    mutating func reserve(_ count: Int) {
        pairs.reserveCapacity(count)
    }

    mutating func add(_ pair: Pair) {
        pairs.append(pair)
    }

    /// Builds the level index; call once after the last `add`. Pairs are stored in the order of
    /// their fire level, so the pairs a move visits sit next to each other in memory.
    mutating func seal() {
        pairs.sort { ($0.condition.a, $0.rule) < ($1.condition.a, $1.rule) }
        levels.removeAll(keepingCapacity: true)
        levels.reserveCapacity(pairs.reduce(0) { $0 + ($1.condition.b != $1.condition.a ? 2 : 1) })
        for (i, pair) in pairs.enumerated() {
            levels.append(Level(value: pair.condition.a, pair: Int32(i)))
            if pair.condition.b != pair.condition.a { levels.append(Level(value: pair.condition.b, pair: Int32(i))) }
        }
        levels.sort { $0.value < $1.value }
    }

    /// Takes over the state of pairs built before a market-list reload. The coordinate starts
    /// unknown, so the next tick looks at every pair (and re-queues those cooling down).
    mutating func restore(_ saved: [Int32: Pair]) {
        for i in pairs.indices {
            guard let old = saved[pairs[i].rule] else { continue }
            pairs[i].armed = old.armed
            pairs[i].spent = old.spent
            pairs[i].lastFired = old.lastFired
        }
    }

    /// The open interval of coordinate values this group can move to without any pair being
    /// able to change state; nil when the next tick must look (the coordinate is unknown, or
    /// sits exactly on a level). Valid until `dueBy`.
    var quietInterval: (low: Double, high: Double)? {
        guard let value, value < gateAtOrAbove else { return nil }
        return (gateBelow, gateAtOrAbove)
    }

    /// The first time a cooling-down pair may fire; `Int64.max` when none waits.
    var dueBy: Int64 { nextDue }

    /// The common case, inlined into the tick loop: the coordinate is known, no cooldown ends
    /// at `t`, and the move to `v` passes no level. Then nothing can change but the value;
    /// returns false when `advance` must look.
    @inline(__always)
    mutating func moveWithoutCrossing(to v: Double, time t: Int64) -> Bool {
        guard let old = value, t < nextDue else { return false }
        if v >= old {
            guard gateAtOrAbove > v else { return false }
        } else {
            guard gateBelow < v, gateAtOrAbove > old else { return false }
        }
        value = v
        return true
    }

    /// Moves the coordinate to `v` at time `t` and fires or re-arms (Docs/rules.md) every pair whose outcome
    /// can change. `prev` is the symbol's previous valid price (for crossings). Appends the rule
    /// index of every pair that fires to `fired`.
    @inline(never)
    mutating func advance(to v: Double, prev: Double?, time t: Int64, stamp: UInt32, fired: inout [Int32]) {
        guard let old = value else {
            // First time the coordinate is known: nothing is settled yet, look at every pair.
            for pair in pairs.indices { evaluate(pair, v, prev, t, stamp, &fired) }
            moveCursor(to: v)
            return
        }
        value = v
        if t >= nextDue {
            // Pairs whose cooldown has ended: one that still holds fires now.
            while let pair = cooling.popDue(at: t) {
                pairs[Int(pair)].pending = false
                evaluate(Int(pair), v, prev, t, stamp, &fired)
            }
            nextDue = cooling.nextDue ?? .max
        }
        // No level in [min(old, v), max(old, v)]: nothing else can change.
        if v >= old {
            if gateAtOrAbove > v { return }
        } else if gateBelow < v, gateAtOrAbove > old {
            return
        }
        let lo = min(old, v)
        let hi = max(old, v)
        var i = cursor
        while i > 0, levels[i - 1].value >= lo { i -= 1 }
        while i < levels.count, levels[i].value <= hi {
            evaluate(Int(levels[i].pair), v, prev, t, stamp, &fired)
            i += 1
        }
        moveCursor(to: v)
    }

    /// Re-establishes `levels[cursor - 1] < value <= levels[cursor]`, walking from the old cursor.
    private mutating func moveCursor(to v: Double) {
        value = v
        var i = cursor
        while i > 0, levels[i - 1].value >= v { i -= 1 }
        while i < levels.count, levels[i].value < v { i += 1 }
        cursor = i
        gateBelow = i > 0 ? levels[i - 1].value : -.infinity
        gateAtOrAbove = i < levels.count ? levels[i].value : .infinity
    }

    @inline(__always)
    private mutating func evaluate(
        _ i: Int, _ v: Double, _ prev: Double?, _ t: Int64, _ stamp: UInt32,
        _ fired: inout [Int32]
    ) {
        guard pairs[i].stamp != stamp else { return }
        pairs[i].stamp = stamp
        let pair = pairs[i]
        if pair.spent { return }
        if pair.armed {
            guard pair.condition.fires(v, prev: prev) else { return }
            // Saturating: a saved firing time and a cooldown may be any 64-bit values.
            if let last = pair.lastFired, t < Self.adding(last, pair.cooldown) {
                // Holds but cools down: fires at the first later tick at which it still holds.
                if pair.condition.isLevel, !pair.pending {
                    pairs[i].pending = true
                    let due = Self.adding(last, pair.cooldown)
                    cooling.push(pair: Int32(i), due: due)
                    nextDue = min(nextDue, due)
                }
                return
            }
            pairs[i].lastFired = t
            pairs[i].armed = false
            if pair.once { pairs[i].spent = true }
            fired.append(pair.rule)
        } else if pair.condition.rearms(v) {
            pairs[i].armed = true
        }
    }

    /// `a + b`, held at `Int64.min`/`Int64.max` instead of overflowing.
    static func adding(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : sum
    }
}
