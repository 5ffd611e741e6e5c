import AlertFeeds
import Logging
import Operations
import ServiceLifecycle
import Synchronization

/// One feed of `run`: the `--source` feed (`tag` nil: its ticks have no source) or a source a
/// rule file defines (rules v3 §2: `tag` is its name, which its ticks carry).
public struct LiveFeed: Sendable {
    /// The `--source` name, or the rule-file source's name.
    public var name: String
    public var tag: String?
    public var runner: FeedRunner

    /// The `--source` feed: named after its source, its ticks without one.
    public init(runner: FeedRunner) {
        self.init(name: runner.source.name, tag: nil, runner: runner)
    }

    public init(name: String, tag: String?, runner: FeedRunner) {
        self.name = name
        self.tag = tag
        self.runner = runner
    }
}

/// One feed as a service: runs its `FeedRunner` (market list, then live prices) and hands each
/// event to the evaluator's inbox on the feed's own lane, in order, waiting while that lane is
/// full; beside it runs the feed's `BackfillService` (its candle history). Feeds share nothing
/// else on the way to the evaluator: one that is down, refusing, slow or flooding holds up no
/// other.
///
/// Graceful shutdown cancels the backfill's request in flight, then stops the feed
/// (`STOPPING=1`, `/healthz` says so); the evaluator gets every event the feed gave before.
/// `stop()` (its source removed by a reload) ends it the same way while the rest runs on. A
/// feed that ends by itself (a fatal error, logged by the runner) tells `ended`.
final class FeedService: Service, CustomStringConvertible {
    let feed: LiveFeed
    let origin: FeedOrigin
    let monitor: PipelineMonitor
    /// The status systemd and `/healthz` show while the pipeline drains.
    let stopping: String
    let inbox: Inbox<EvaluatorInput>
    let lane: Int
    let backfill: BackfillService?
    /// Called when the feed ended by itself (not stopped, not shut down).
    let ended: @Sendable (FeedService) async -> Void
    private let stopRequest = Mutex<(requested: Bool, task: Task<Void, Never>?)>((false, nil))
    private let finished = Mutex<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    init(
        feed: LiveFeed, origin: FeedOrigin, monitor: PipelineMonitor, stopping: String, inbox: Inbox<EvaluatorInput>,
        lane: Int, backfill: BackfillService?, ended: @escaping @Sendable (FeedService) async -> Void
    ) {
        self.feed = feed
        self.origin = origin
        self.monitor = monitor
        self.stopping = stopping
        self.inbox = inbox
        self.lane = lane
        self.backfill = backfill
        self.ended = ended
    }

    var description: String { "feed \(feed.name)" }

    func run() async {
        let (runner, origin, monitor, stopping, inbox, lane) = (
            feed.runner, origin, monitor, stopping, inbox, lane
        )
        let task = Task { await runner.runFeed { event in await inbox.send(.feed(event, from: origin), lane: lane) } }
        let stoppedEarly = stopRequest.withLock { state in
            state.task = task
            return state.requested
        }
        if stoppedEarly { task.cancel() }
        let fills = backfill.map { backfill in Task { await backfill.fill() } }
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await task.value
            } onGracefulShutdown: {
                // The candle request in flight must not hold up the feed's stop.
                fills?.cancel()
                monitor.shutdownBegan(status: stopping)
                task.cancel()
            }
        } onCancel: {
            fills?.cancel()
            task.cancel()
        }
        fills?.cancel()
        await fills?.value
        let removed = stopRequest.withLock { $0.requested }
        if !removed, !Task.isShuttingDownGracefully, !Task.isCancelled { await ended(self) }
        let waiters = finished.withLock { state in
            state.done = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Stops the feed while the rest runs on (its source was removed), and returns once it has
    /// stopped: every event it gave before is in the inbox, and the evaluator is told it ended.
    func stop() async {
        let task = stopRequest.withLock { state in
            state.requested = true
            return state.task
        }
        task?.cancel()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = finished.withLock { state in
                if !state.done { state.waiters.append(continuation) }
                return state.done
            }
            if done { continuation.resume() }
        }
        await inbox.send(.feedEnded(origin), lane: lane)
    }
}
