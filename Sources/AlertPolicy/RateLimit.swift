import AlertModel

/// At most `count` starts in any interval of `per` milliseconds of the caller's clock (the sink
/// workers pass monotonic milliseconds) (Docs/sinks.md#rate): a sliding window over the last
/// `count` starts.
///
/// An attempt begun with `begin` is in flight until `settle`: the receiver may see it at any
/// moment until it ends, so until then it holds its place in the window as if it were still
/// starting, and no start that would make `count + 1` within `per` of it is allowed.
public struct RateLimit: Sendable, Equatable {
    public let spec: RateSpec
    /// The last `count` start times of attempts that are not in flight (ended ones count from
    /// their end), oldest first.
    public private(set) var starts: [Int64] = []
    /// The start times of attempts in flight.
    public private(set) var inFlight: [Int64] = []

    public init(_ spec: RateSpec) {
        self.spec = spec
    }

    /// The window as `starts` and `inFlight` gave it, kept elsewhere (a store that several
    /// deliverers share).
    public init(_ spec: RateSpec, starts: [Int64], inFlight: [Int64]) {
        self.spec = spec
        self.starts = starts.sorted()
        self.inFlight = inFlight
        trim()
    }

    /// The earliest time at or after `now` at which a delivery may start; `.max` while the
    /// attempt that decides it is still in flight (its `settle` tells).
    public func nextStart(now: Int64) -> Int64 {
        // Oldest first, with the attempts in flight last (they end no sooner than now).
        let index = starts.count + inFlight.count - spec.count
        guard index >= 0 else { return now }
        guard index < starts.count else { return .max }
        return max(now, starts[index] + spec.per)
    }

    public func allows(now: Int64) -> Bool { nextStart(now: now) == now }

    /// Records a start at `now` that is over at once; the caller asked `allows(now:)` first.
    public mutating func record(_ now: Int64) {
        starts.append(now)
        trim()
    }

    /// Records the start at `now` of an attempt in flight until `settle(started: now, …)`.
    public mutating func begin(_ now: Int64) {
        inFlight.append(now)
    }

    /// Counts the attempt that started at `started` from when it ended, `now`, instead: the
    /// receiver saw it at some time in between, so spacing the next starts from the ends keeps
    /// at most `count` in any `per` as the receiver counts them, not only as they left.
    public mutating func settle(started: Int64, now: Int64) {
        if let index = inFlight.firstIndex(of: started) {
            inFlight.remove(at: index)
            starts.append(max(started, now))
        } else {
            guard let index = starts.lastIndex(of: started), now > started else { return }
            starts[index] = now
        }
        starts.sort()
        trim()
    }

    /// Removes the attempt in flight that started at `started` without counting it: it was
    /// never made.
    public mutating func cancel(started: Int64) {
        if let index = inFlight.firstIndex(of: started) { inFlight.remove(at: index) }
    }

    private mutating func trim() {
        if starts.count > spec.count { starts.removeFirst(starts.count - spec.count) }
    }
}

/// The rate stage of one sink (Docs/sinks.md#rate): what waits for it, in order, and what may
/// start at a given wall time. Nothing is ever dropped.
///
/// Backlog batching: when more events wait than the rate's `count`, the next delivery carries
/// the waiting events from the front, up to `batchMax` (the sink's `group.max`, default 100),
/// as one digest; a digest of one event is that event. High-priority deliveries wait in their
/// own queue, leave before the rest, and always alone.
public struct SinkPacer: Sendable {
    public let sink: String
    public private(set) var rate: RateLimit?
    public let batchMax: Int
    private var urgent: [Delivery] = []
    private var waiting: [Delivery] = []

    public init(sink: String, rate: RateSpec?, batchMax: Int = GroupSpec.defaultMax) {
        self.sink = sink
        self.rate = rate.map(RateLimit.init)
        self.batchMax = batchMax
    }

    public mutating func enqueue(_ delivery: Delivery, urgent isUrgent: Bool = false) {
        if isUrgent { urgent.append(delivery) } else { waiting.append(delivery) }
    }

    /// Events waiting, digests counted by their events.
    public var waitingEvents: Int { (urgent + waiting).reduce(0) { $0 + $1.events.count } }

    /// When the next delivery may start (nil: nothing waits).
    public func nextStart(now: Int64) -> Int64? {
        guard !urgent.isEmpty || !waiting.isEmpty else { return nil }
        return rate?.nextStart(now: now) ?? now
    }

    /// The delivery that starts at `now`, recorded against the rate; nil when nothing waits or
    /// the rate allows no start yet.
    public mutating func next(now: Int64) -> Delivery? {
        guard nextStart(now: now) == now else { return nil }
        let delivery: Delivery
        if !urgent.isEmpty {
            delivery = urgent.removeFirst()
        } else if let rate, waitingEvents > rate.spec.count {
            delivery = batch()
        } else {
            delivery = waiting.removeFirst()
        }
        rate?.record(now)
        return delivery
    }

    /// The front of `waiting` as one delivery of at most `batchMax` events (at least the first).
    private mutating func batch() -> Delivery {
        var taken = 1
        var events = waiting[0].events.count
        while taken < waiting.count, events + waiting[taken].events.count <= batchMax {
            events += waiting[taken].events.count
            taken += 1
        }
        let parts = waiting.prefix(taken)
        waiting.removeFirst(taken)
        if taken == 1 { return parts.first! }
        return Delivery(sink: sink, events: parts.flatMap(\.events), held: parts.allSatisfy(\.held))
    }
}
