import AlertModel

/// Saving and restoring the engine's state: across `check` runs, daemon restarts and rule reloads.
extension Engine {
    /// Hands the engine saved state. Each symbol takes its snapshot on its first tick, so
    /// restoring costs nothing for symbols that never come; pairs of rules that are gone or
    /// whose fingerprint changed start fresh. Call before the first tick.
    public func restore(_ snapshots: some Sequence<SymbolSnapshot>) {
        core.restore(snapshots)
        for snapshot in snapshots {
            if let events = snapshot.events { eventNumbers.restore(Key.of(snapshot.symbol), events) }
        }
    }

    /// The minutes whose saved price evaluating `ticks` can look up, by key: the
    /// start of each change window for the ticks' minutes (Docs/rules.md#change-windows). For a
    /// restore that reads only that much history (`EngineStateStore.load(lookingUp:)`, as `check`
    /// does).
    public func historyLookups(for ticks: some Sequence<Tick>) -> [String: [ClosedRange<Int64>]] {
        var minutes: [String: ClosedRange<Int64>] = [:]
        for tick in ticks {
            let symbol = tick.key
            let minute = floorDivMod(tick.time, 60_000).0
            minutes[symbol] =
                minutes[symbol].map { min($0.lowerBound, minute)...max($0.upperBound, minute) } ?? minute...minute
        }
        let windows = core.windowMinutes.sorted()
        var lookups = minutes.mapValues { span in
            windows.map { (span.lowerBound &- $0)...(span.upperBound &- $0) }
        }
        // A portfolio's or series' value reads the last price of every holding or member, and
        // its own saved state.
        if core.pairRules.hasSynthetic {
            for symbol in minutes.keys {
                for other in core.pairRules.related(to: symbol) where lookups[other] == nil { lookups[other] = [] }
            }
        }
        return lookups
    }

    /// Snapshots of the keys that accepted a tick since the last call (or since the start),
    /// which are then counted as saved: what a periodic or final save writes.
    public func takeChanges() -> [SymbolSnapshot] {
        withEvents(core.takeSnapshots(all: false))
    }

    /// `takeChanges`, a part at a time: the snapshots of at most `limit` of the keys that
    /// accepted a tick (the others stay changed for the next call). Calls until one returns
    /// nothing save what one `takeChanges` would, while only one part's copies of the histories
    /// exist at a time.
    public func takeChanges(limit: Int) -> [SymbolSnapshot] {
        withEvents(core.takeSnapshots(all: false, limit: limit))
    }

    /// `takeChanges` for the last save of the engine's life (a `check` run's end): each minute
    /// history is moved into its snapshot instead of copied, so the engine must not take
    /// ticks afterwards (its histories are empty).
    public func takeFinalChanges() -> [SymbolSnapshot] {
        withEvents(core.takeSnapshots(all: false, moving: true))
    }

    /// Every key's state, including restored snapshots not used yet: what a new engine
    /// built from reloaded rules takes over.
    public func snapshotAll() -> [SymbolSnapshot] {
        withEvents(core.takeSnapshots(all: true))
    }

    /// Each snapshot with its key's event counts (see `EventNumbers`).
    private func withEvents(_ snapshots: [SymbolSnapshot]) -> [SymbolSnapshot] {
        var out = snapshots
        for i in out.indices where out[i].events == nil { out[i].events = eventNumbers.counts(of: out[i].symbol) }
        return out
    }
}

extension EngineCore {
    mutating func restore(_ snapshots: some Sequence<SymbolSnapshot>) {
        for snapshot in snapshots {
            let symbol = Key.of(snapshot.symbol)
            if restoring[symbol] == nil, symbolIndex[symbol] == nil {
                restoring[symbol] = snapshot
            }
        }
    }

    /// `limit`: how many changed keys one call takes at most.
    mutating func takeSnapshots(all: Bool, moving: Bool = false, limit: Int = .max) -> [SymbolSnapshot] {
        var out: [SymbolSnapshot] = []
        var taken = 0
        for s in symbols.indices where all || symbols[s].changed {
            if !all {
                guard taken < limit else { continue }
                taken += 1
            }
            var history: (minutes: [Int64], prices: [Double]) = ([], [])
            // A key that saves its buckets saves its minutes there, each once, with highs and lows.
            if symbols[s].keepsHistory, !symbols[s].savesBuckets {
                let e = moving ? symbols[s].minutes.takeEntries() : symbols[s].minutes.entries
                history = (e.keys, e.last)
            }
            out.append(snapshot(of: s, history: history))
            if !all { symbols[s].changed = false }
        }
        if all { out += restoring.keys.sorted().map { restoring[$0]! } }
        return out
    }

    /// The pair states of `snapshot` whose rules are still the same (same id, same fingerprint),
    /// by rule index. Saved pairs are in rule order, and so are the rules that apply to the
    /// symbol (`expected`, ascending) while the rule files keep their order: each pair is looked
    /// for after the previous one's rule there first, and in the index of all rule ids only when
    /// that fails (rules moved, or no longer apply), so a restore of unchanged rules hashes no id.
    mutating func savedPairs(_ snapshot: SymbolSnapshot, expected: [Int32]) -> [Int32: ConditionGroup.Pair] {
        guard !snapshot.pairs.isEmpty else { return [:] }
        var saved: [Int32: ConditionGroup.Pair] = [:]
        saved.reserveCapacity(snapshot.pairs.count)
        var next = 0
        var misses = 0
        for pair in snapshot.pairs {
            var rule: Int32?
            if misses < 8 {
                if let k = expected[next...].firstIndex(where: { rules[Int($0)].id == pair.rule }) {
                    rule = expected[k]
                    next = k + 1
                } else {
                    misses += 1
                }
            }
            if rule == nil { rule = ensureRuleIndex()[pair.rule] }
            guard let r = rule, rules[Int(r)].isIndexed, fingerprint(r) == pair.fingerprint else { continue }
            var restored = self.pair(of: r)
            restored.armed = pair.armed
            restored.spent = pair.spent
            restored.lastFired = pair.lastFired
            saved[r] = restored
        }
        return saved
    }

    /// The saved states of `snapshot`'s pairs of rules evaluated pair by pair whose rules are
    /// still the same (same id, same fingerprint), by rule index.
    mutating func savedPairStates(_ snapshot: SymbolSnapshot) -> [Int32: PairState] {
        guard !snapshot.pairStates.isEmpty else { return [:] }
        var out: [Int32: PairState] = [:]
        for pair in snapshot.pairStates {
            guard let r = ensureRuleIndex()[pair.rule], !rules[Int(r)].isIndexed, fingerprint(r) == pair.fingerprint
            else { continue }
            out[r] = pair.state
        }
        return out
    }

    private mutating func ensureRuleIndex() -> [String: Int32] {
        if let ruleIndexByID { return ruleIndexByID }
        var byID: [String: Int32] = [:]
        byID.reserveCapacity(rules.count)
        for i in rules.indices { byID[rules[i].id] = Int32(i) }
        ruleIndexByID = byID
        return byID
    }

    /// Rule `r`'s `RuleFingerprint`, computed on first use: a run computes those of the rules
    /// whose pairs it restores or saves, not of every rule.
    private mutating func fingerprint(_ r: Int32) -> UInt64 {
        if fingerprints.isEmpty { fingerprints = Array(repeating: 0, count: rules.count) }
        if fingerprints[Int(r)] == 0 {
            fingerprints[Int(r)] = RuleFingerprint.of(rules[Int(r)], using: &fingerprintBuffer)
        }
        return fingerprints[Int(r)]
    }

    private mutating func snapshot(of s: Int, history: (minutes: [Int64], prices: [Double])) -> SymbolSnapshot {
        let state = symbols[s]
        var pairs: [ConditionGroup.Pair] = []
        for g in state.groups { pairs += groups[g].pairs.filter { !$0.isSettled } }
        pairs += state.retired.values.filter { !$0.isSettled }
        pairs.sort { $0.rule < $1.rule }
        var saved: [PairSnapshot] = []
        saved.reserveCapacity(pairs.count)
        for pair in pairs {
            saved.append(
                PairSnapshot(
                    rule: rules[Int(pair.rule)].id, fingerprint: fingerprint(pair.rule),
                    armed: pair.armed, spent: pair.spent, lastFired: pair.lastFired))
        }
        var snapshot = SymbolSnapshot(
            symbol: state.symbol, firstTime: state.firstTime, lastTime: state.lastTime, lastPrice: state.lastPrice,
            minutes: history.minutes, prices: history.prices, pairs: saved)
        if state.savesBuckets {
            snapshot.evaluatesPairs = true
            snapshot.newest = state.newest
            snapshot.minuteBuckets = state.minutes
            snapshot.hourBuckets = state.hours
            for (r, pair) in state.pairs.sorted(by: { $0.key < $1.key }) where pair != PairState() {
                snapshot.pairStates.append(
                    PairStateSnapshot(rule: rules[Int(r)].id, fingerprint: fingerprint(r), state: pair))
            }
        }
        return snapshot
    }
}

extension ConditionGroup.Pair {
    /// Armed and never fired: what a fresh pair is, so there is nothing to save.
    var isSettled: Bool { armed && !spent && lastFired == nil }
}

extension KeyState {
    /// Its snapshot holds its minute and hour buckets (and so no minute history): it evaluates
    /// rules pair by pair, or holds the state of such pairs.
    var savesBuckets: Bool { evaluatesPairs || !pairs.isEmpty }

    /// Takes over a saved symbol: its times, `prev`, its history when its rules need one (the
    /// saved minute history and minute buckets made one: `Buckets.merging`), and the saved
    /// pairs of rules that do not apply to it now. The snapshot's minute history is moved out,
    /// not copied, when there are no saved minute buckets to merge it with.
    mutating func restore(_ snapshot: inout SymbolSnapshot, retired: [Int32: ConditionGroup.Pair]) {
        firstTime = snapshot.firstTime
        lastTime = snapshot.lastTime
        lastPrice = snapshot.lastPrice
        newest = snapshot.newest ?? snapshot.lastTime
        if keepsHistory || evaluatesPairs {
            let extremes = minutes.keepsExtremes
            if snapshot.minuteBuckets.isEmpty {
                var none: [Double] = []
                var alsoNone: [Double] = []
                minutes = Buckets(
                    taking: &snapshot.minutes, last: &snapshot.prices, high: &none, low: &alsoNone,
                    keepsExtremes: extremes)
            } else {
                minutes = snapshot.minuteBuckets.keepingExtremes(extremes).merging((snapshot.minutes, snapshot.prices))
            }
        }
        if evaluatesPairs { hours = snapshot.hourBuckets.keepingExtremes(hours.keepsExtremes) }
        self.retired = retired
    }
}
