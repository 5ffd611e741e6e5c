import AlertHTTP
import AlertModel
import Logging
import Platform
import Synchronization

/// Runs a `PriceSource` until cancelled: loads the market list (and reloads it), keeps the
/// live transport connected with backoff and jitter, watches for silence, and reports
/// everything as `FeedEvent`s through `emit`, in order, from one task at a time.
public struct FeedRunner: Sendable {
    public let source: any PriceSource
    public let http: any HTTPClient
    public let options: FeedOptions
    public let logger: Logger
    /// Sequence gaps seen on the feed's connections (Coinbase `sequence_num`), each followed
    /// by a fresh connection and subscription.
    let sequenceGaps = Counter()
    /// The market list an earlier run kept (the state folder), and when it was fetched (epoch
    /// ms): when the REST API cannot give a list at start, the feed follows this one meanwhile
    /// (said at warning) and fetches a fresh one with backoff. Nil: the feed waits for a list.
    public var saved: (markets: [Market], fetchedAt: Int64)?

    public init(
        source: any PriceSource, http: any HTTPClient, options: FeedOptions = FeedOptions(),
        logger: Logger = Logger(label: "pricealert.feed")
    ) {
        self.source = source
        self.http = http
        self.options = options
        self.logger = logger
    }

    /// How many sequence gaps the feed's connections saw (each one logged and followed by a
    /// fresh connection): messages the exchange sent that never arrived.
    public var sequenceGapCount: Int { sequenceGaps.value }

    /// Runs the whole feed (market list, then live prices) in a task of its own and hands its
    /// events over an unbounded stream, which finishes when the task ends. Cancel the task to
    /// stop the feed. (`run` bounds its feed with `runFeed` into the evaluator's inbox.)
    public func start() -> (events: AsyncStream<FeedEvent>, task: Task<Void, Never>) {
        let (events, output) = AsyncStream.makeStream(of: FeedEvent.self)
        let task = Task {
            defer { output.finish() }
            await runFeed { output.yield($0) }
        }
        return (events, task)
    }

    /// Runs the whole feed (market list, then live prices) until cancelled or a fatal error
    /// (logged), handing each event to `emit` and waiting for it: a reader waiting in `emit`
    /// reads no more frames, so a slow consumer backs pressure up to the socket.
    public func runFeed(emit: @escaping @Sendable (FeedEvent) async -> Void) async {
        // One health for both stages: a market list that cannot be loaded makes the feed
        // stale too, and the first prices after that recover it.
        let health = FeedHealth(staleAfter: staleLimit, clock: options.watchClock)
        do {
            let fresh = try await loadMarkets(health: health, emit: emit, orSaved: true).fresh
            try await run(health: health, emit: emit, listIsSaved: !fresh)
        } catch is CancellationError {
        } catch {
            logger.error("\(source.name): feed stopped: \(error)")
        }
    }

    /// Loads the market list, retrying with backoff until it succeeds or the task is cancelled.
    /// Until it succeeds the source gives no prices either: once that lasts `staleLimit` (the
    /// requests failing, or one request hanging), the feed is announced stale.
    public func loadMarkets(emit: @escaping @Sendable (FeedEvent) async -> Void) async throws -> [Market] {
        try await loadMarkets(
            health: FeedHealth(staleAfter: staleLimit, clock: options.watchClock), emit: emit, orSaved: false
        ).markets
    }

    /// `orSaved`: after the first failed request, the `saved` list (when there is one and the
    /// source can follow it) is taken instead of waiting (`fresh` false).
    func loadMarkets(
        health: FeedHealth, emit: @escaping @Sendable (FeedEvent) async -> Void, orSaved: Bool
    ) async throws -> (markets: [Market], fresh: Bool) {
        try await withThrowingTaskGroup(of: ([Market], Bool)?.self) { group in
            group.addTask {
                try await watchSilence(health, limit: health.staleAfter, emit: emit)
                return nil
            }
            group.addTask { try await loadMarketsRetrying(emit: emit, orSaved: orSaved) }
            while let result = try await group.next() {
                if let loaded = result {
                    group.cancelAll()
                    return loaded
                }
            }
            throw CancellationError()
        }
    }

    private func loadMarketsRetrying(
        emit: @escaping @Sendable (FeedEvent) async -> Void, orSaved: Bool
    ) async throws -> ([Market], Bool) {
        var backoff = Backoff(base: options.backoffBase, cap: options.backoffMaximum)
        while true {
            do {
                let markets = try await source.loadMarkets(http: http)
                await emit(.markets(markets))
                return (markets, true)
            } catch {
                let wait = backoff.next(atLeast: .milliseconds((error as? SourceError)?.retryAfter ?? 0))
                await emit(.disconnected(reason: "market list: \(error)", retryIn: wait))
                if orSaved, let saved, !saved.markets.isEmpty, source.adopt(savedMarkets: saved.markets) {
                    logger.warning(
                        "\(source.name): market list: \(error); following the list saved \(Timestamp.format(saved.fetchedAt)) (\(saved.markets.count) markets) until the exchange gives a fresh one"
                    )
                    await emit(.markets(saved.markets))
                    return (saved.markets, false)
                }
                try await options.clock.sleep(for: wait)
            }
        }
    }

    /// Follows live prices until cancelled. Call after `loadMarkets`.
    public func run(emit: @escaping @Sendable (FeedEvent) async -> Void) async throws {
        try await run(
            health: FeedHealth(staleAfter: staleLimit, clock: options.watchClock), emit: emit, listIsSaved: false)
    }

    /// `listIsSaved`: the list followed is the saved one; a fresh one is fetched with backoff.
    func run(health: FeedHealth, emit: @escaping @Sendable (FeedEvent) async -> Void, listIsSaved: Bool) async throws {
        let plan = source.livePlan()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await reloadMarkets(emit: emit, listIsSaved: listIsSaved) }
            for companion in plan.companions {
                group.addTask { try await poll(companion, health: nil, emit: emit) }
            }
            group.addTask {
                switch plan.transport {
                case .websocket(let ws): try await follow(ws, health: health, emit: emit)
                case .polling(let polling): try await poll(polling, health: health, emit: emit)
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// How long without prices counts as stale: `options.staleAfter`, but a polled source is
    /// silent between polls, so for one at least three poll intervals.
    public var staleLimit: Duration {
        if case .polling(let polling) = source.livePlan().transport {
            return max(options.staleAfter, polling.interval * 3)
        }
        return options.staleAfter
    }

    /// Reloads the market list every `marketsEvery`. A reload that fails, or that lists no
    /// market at all, keeps the last list, with a warning: an exchange's empty answer would
    /// leave `match` rules applying to nothing, and make every market of the next full list
    /// look new to `listed` rules. While the list followed is a saved one (`listIsSaved`), the
    /// next try comes after a backoff, not after `marketsEvery`.
    private func reloadMarkets(emit: @escaping @Sendable (FeedEvent) async -> Void, listIsSaved: Bool) async throws {
        var saved = listIsSaved
        var backoff = Backoff(base: options.backoffBase, cap: options.backoffMaximum)
        while true {
            try await options.clock.sleep(for: saved ? min(backoff.next(), options.marketsEvery) : options.marketsEvery)
            do {
                let markets = try await source.loadMarkets(http: http)
                if markets.isEmpty {
                    logger.warning(
                        "\(source.name): market list reload gave no markets; keeping the last one ('match' rules would apply to nothing)"
                    )
                } else {
                    if saved { logger.notice("\(source.name): fresh market list: \(markets.count) markets") }
                    saved = false
                    await emit(.markets(markets))
                }
            } catch {
                logger.warning("\(source.name): market list reload failed: \(error); keeping the last one")
            }
        }
    }

    /// Emits the frame's outcome and keeps `health` up to date.
    func deliver(_ frame: FeedFrame, health: FeedHealth?, emit: @Sendable (FeedEvent) async -> Void) async {
        switch frame {
        case .ticks(let ticks):
            if let health, !ticks.isEmpty, let silence = health.pricesArrived() {
                await emit(.recovered(silentFor: silence))
            }
            if !ticks.isEmpty { await emit(.ticks(ticks)) }
        case .control:
            break
        case .invalid(let reason):
            await emit(.dropped(reason: reason))
        }
    }

    /// Polls `plan` forever: honours `Retry-After`, backs off on errors, and (for the main
    /// transport) reports staleness when polls keep failing.
    func poll(
        _ plan: PollingPlan, health: FeedHealth?, emit: @escaping @Sendable (FeedEvent) async -> Void
    ) async throws {
        var backoff = Backoff(base: options.backoffBase, cap: options.backoffMaximum)
        var announced = false
        let start = health?.now() ?? .zero
        while true {
            let wait: Duration
            do {
                let body = try await http.fetch(plan.request)
                if !announced, health != nil {
                    announced = true
                    await emit(.connected(url: Endpoint.display(plan.request.url)))
                }
                await deliver(plan.parse(body, Wallclock.millis()), health: health, emit: emit)
                backoff.reset()
                wait = plan.interval
            } catch let error as SourceError {
                wait = backoff.next(atLeast: .milliseconds(error.retryAfter ?? 0))
                if health != nil {
                    await emit(.disconnected(reason: error.description, retryIn: wait))
                } else {
                    // A side request (BTSE's 24 h figures) is no disconnect: log it here.
                    logger.warning("\(source.name): \(error); retrying in \(wait.milliseconds) ms")
                }
            }
            if let health, health.silence(since: start) >= health.staleAfter, let silence = health.declareStale() {
                await emit(.stale(silentFor: silence))
            }
            try await options.clock.sleep(for: wait)
        }
    }
}

/// When the last price came, and whether the feed has been declared stale, on the watch clock
/// (`FeedOptions.watchClock`). Shared between the connection and its watchdog.
final class FeedHealth: Sendable {
    private struct State {
        var lastPrice: Duration
        var staleSince: Duration?
    }

    let staleAfter: Duration
    private let clock: ElapsedMillis
    private let state: Mutex<State>

    init(staleAfter: Duration, clock: any Clock<Duration> = ContinuousClock()) {
        self.staleAfter = staleAfter
        self.clock = ElapsedMillis(clock)
        state = Mutex(State(lastPrice: .zero))
    }

    /// Now on the watch clock, as time since this was made.
    func now() -> Duration { .milliseconds(clock()) }

    /// Returns once `duration` has passed on the watch clock.
    func sleep(for duration: Duration) async throws { try await clock.sleep(for: duration) }

    /// Records prices; returns how long the feed was silent if it had been declared stale.
    func pricesArrived() -> Duration? {
        let now = now()
        return state.withLock { s in
            defer {
                s.lastPrice = now
                s.staleSince = nil
            }
            return s.staleSince.map { _ in now - s.lastPrice }
        }
    }

    /// How long no price came, counting from `start` (a `now()`) at the earliest (a fresh
    /// connection gets its own `staleAfter` to deliver).
    func silence(since start: Duration) -> Duration {
        let now = now()
        return state.withLock { now - max($0.lastPrice, start) }
    }

    /// Declares the feed stale, once; returns the time since the last price when it does.
    func declareStale() -> Duration? {
        let now = now()
        return state.withLock { s in
            guard s.staleSince == nil else { return nil }
            s.staleSince = now
            return now - s.lastPrice
        }
    }
}
