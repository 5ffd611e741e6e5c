import AlertModel

/// Saved state with times ahead of the local clock (Docs/rules.md#ticks-from-the-future): a tick
/// that came with a wrong clock, or a feed's time from the future, left a `lastTime` that would
/// make every later tick of its symbol out of order. Such state is made usable again rather
/// than deleted: every time after the limit is taken as never seen, and what was kept for it
/// (history minutes and hours after it) is dropped. Prices (`prev`), pair arming, `once` and
/// reminder counts stay as they are.
extension SymbolSnapshot {
    /// The latest time the snapshot holds: its last tick, its newest history, a pair's last event.
    public var latestTime: Int64? {
        var times: [Int64?] = [firstTime, lastTime, newest, events?.time]
        times.append(minutes.last.map { $0 * 60_000 })
        times += pairs.map(\.lastFired)
        times += pairStates.flatMap { [$0.state.lastFired, $0.state.since] }
        return times.compactMap { $0 }.max()
    }

    /// The snapshot with every time after `limit` (epoch ms) taken as never seen; nil when it
    /// holds no such time.
    public func forgettingTimes(after limit: Int64) -> SymbolSnapshot? {
        guard let latest = latestTime, latest > limit else { return nil }
        func kept(_ time: Int64?) -> Int64? { time.flatMap { $0 > limit ? nil : $0 } }
        var out = self
        out.firstTime = kept(firstTime)
        out.lastTime = kept(lastTime)
        let lastMinute = floorDivMod(limit, 60_000).0
        if let cut = minutes.firstIndex(where: { $0 > lastMinute }) {
            out.minutes.removeSubrange(cut...)
            out.prices.removeSubrange(cut...)
        }
        out.newest = kept(newest)
        out.minuteBuckets = minuteBuckets.dropping(after: floorDivMod(limit, PairRuleIndex.minute).0)
        out.hourBuckets = hourBuckets.dropping(after: floorDivMod(limit, PairRuleIndex.hour).0)
        for i in out.pairs.indices { out.pairs[i].lastFired = kept(out.pairs[i].lastFired) }
        for i in out.pairStates.indices {
            out.pairStates[i].state.lastFired = kept(out.pairStates[i].state.lastFired)
            out.pairStates[i].state.since = kept(out.pairStates[i].state.since)
        }
        if let events, events.time > limit { out.events = nil }
        return out
    }
}

extension Buckets {
    /// The buckets without those after `key`.
    func dropping(after key: Int64) -> Buckets {
        var e = keepingExtremes(true).entries
        guard let cut = e.keys.firstIndex(where: { $0 > key }) else { return self }
        e.keys.removeSubrange(cut...)
        e.last.removeSubrange(cut...)
        e.high.removeSubrange(cut...)
        e.low.removeSubrange(cut...)
        return Buckets(taking: &e.keys, last: &e.last, high: &e.high, low: &e.low, keepsExtremes: keepsExtremes)
    }
}

/// What forgetting times after a limit did, for the one warning that says so.
public struct ForgottenTimes: Sendable, Equatable {
    /// Symbols whose state held a time after the limit, upper-cased, sorted.
    public var symbols: [String]
    /// The latest of those times.
    public var latest: Int64

    /// Each snapshot with its times after `limit` forgotten, and what was forgotten (nil: nothing).
    public static func apply(after limit: Int64, to snapshots: inout [SymbolSnapshot]) -> ForgottenTimes? {
        var symbols: [String] = []
        var latest = Int64.min
        for i in snapshots.indices {
            guard let fixed = snapshots[i].forgettingTimes(after: limit) else { continue }
            latest = max(latest, snapshots[i].latestTime ?? latest)
            symbols.append(snapshots[i].symbol)
            snapshots[i] = fixed
        }
        return symbols.isEmpty ? nil : ForgottenTimes(symbols: symbols.sorted(), latest: latest)
    }

    /// The one warning line: which state held times after `limit`, and what is done about it.
    public func warning(limit: Int64, why: String) -> String {
        "the state of \(symbolList) holds times up to \(Timestamp.format(latest)), \(why) "
            + "(\(Timestamp.format(limit))): those times are taken as not seen, so later ticks are not out of order"
    }

    /// `N symbols (BTC, ETH, …)`: at most five named.
    public var symbolList: String {
        let named =
            symbols.prefix(5).map { UserText.escaped($0) }.joined(separator: ", ") + (symbols.count > 5 ? ", …" : "")
        return "\(symbols.count) symbol\(symbols.count == 1 ? "" : "s") (\(named))"
    }
}
