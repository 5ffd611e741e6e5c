/// All (rule, symbol) pairs of one symbol that read the same coordinate: the price, or the
/// change over one window. Their key levels are kept sorted, so when the coordinate moves
/// from `old` to `new` only the pairs with a level in `[min, max]` can change state; every
/// other pair's outcome is the same as at the previous evaluation (see `CompiledCondition`).
/// The one exception, pairs whose level condition holds while they cool down, waits in a
/// `CooldownQueue` and is looked at again when its cooldown ends (in between, any change of
/// its condition is a level crossing and is visited like any other). This makes a tick cost
/// about the same with 100 rules or 1 000 000.
struct ConditionGroup: Sendable {
    enum Coordinate: Sendable, Equatable {
        case price
        /// Window in milliseconds.
        case change(window: Int64)
    }

    struct PairState: Sendable {
        var armed = true
        /// Fired with `repeat: once`: never fires or re-arms again.
        var spent = false
        /// Waiting in the cooldown queue.
        var pending = false
        var lastFired: Int64?
        /// The tick stamp of the last evaluation, so a pair is evaluated once per tick.
        var stamp: UInt32 = 0
    }

    let coordinate: Coordinate
    /// Per pair: the rule's index in the engine's rule list (its evaluation order).
    private(set) var rules: [Int32] = []
    private var conditions: [CompiledCondition] = []
    private(set) var states: [PairState] = []
    private var levels: [Double] = []
    private var levelPairs: [Int32] = []
    private var cooling = CooldownQueue()
    /// The coordinate at the last evaluation; nil until it is first known.
    private(set) var value: Double?

    init(coordinate: Coordinate) {
        self.coordinate = coordinate
    }

    mutating func add(rule: Int32, condition: CompiledCondition) {
        let pair = Int32(rules.count)
        rules.append(rule)
        conditions.append(condition)
        states.append(PairState())
        levels.append(condition.a)
        levelPairs.append(pair)
        if condition.b != condition.a {
            levels.append(condition.b)
            levelPairs.append(pair)
        }
    }

    /// Sorts the level index; call once after the last `add`.
    mutating func seal() {
        let order = levels.indices.sorted { levels[$0] < levels[$1] }
        levels = order.map { levels[$0] }
        levelPairs = order.map { levelPairs[$0] }
    }

    /// What the engine must know about a rule to apply spec §5.
    struct Policy {
        let cooldown: UnsafeBufferPointer<Int64>
        let once: UnsafeBufferPointer<Bool>
    }

    /// Moves the coordinate to `v` at time `t` and applies spec §5 to every pair whose outcome
    /// can change. `prev` is the symbol's previous valid price (for crossings). Appends the rule
    /// index of every pair that fires to `fired`.
    mutating func advance(to v: Double, prev: Double?, time t: Int64, stamp: UInt32,
                          policy: Policy, fired: inout [Int32]) {
        if let old = value {
            // Pairs whose cooldown has ended first: one that still holds fires now.
            while let pair = cooling.popDue(at: t) {
                states[Int(pair)].pending = false
                evaluate(Int(pair), v, prev, t, stamp, policy, &fired)
            }
            let lo = min(old, v)
            let hi = max(old, v)
            var i = lowerBound(lo)
            while i < levels.count, levels[i] <= hi {
                evaluate(Int(levelPairs[i]), v, prev, t, stamp, policy, &fired)
                i += 1
            }
        } else {
            // First time the coordinate is known: nothing is settled yet, look at every pair.
            for pair in 0..<rules.count {
                evaluate(pair, v, prev, t, stamp, policy, &fired)
            }
        }
        value = v
    }

    @inline(__always)
    private mutating func evaluate(_ pair: Int, _ v: Double, _ prev: Double?, _ t: Int64, _ stamp: UInt32,
                                   _ policy: Policy, _ fired: inout [Int32]) {
        guard states[pair].stamp != stamp else { return }
        states[pair].stamp = stamp
        let state = states[pair]
        if state.spent { return }
        let condition = conditions[pair]
        let rule = Int(rules[pair])
        if state.armed {
            guard condition.fires(v, prev: prev) else { return }
            if let last = state.lastFired, t - last < policy.cooldown[rule] {
                // Holds but cools down: fires at the first later tick at which it still holds.
                if condition.isLevel, !states[pair].pending {
                    states[pair].pending = true
                    cooling.push(pair: Int32(pair), due: last + policy.cooldown[rule])
                }
                return
            }
            states[pair].lastFired = t
            states[pair].armed = false
            if policy.once[rule] { states[pair].spent = true }
            fired.append(rules[pair])
        } else if condition.rearms(v) {
            states[pair].armed = true
        }
    }

    private func lowerBound(_ x: Double) -> Int {
        var lo = 0
        var hi = levels.count
        while lo < hi {
            let mid = (lo + hi) >> 1
            if levels[mid] < x { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}
