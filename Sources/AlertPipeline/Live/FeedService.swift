import AlertFeeds
import Operations
import ServiceLifecycle

/// The feed as a service: runs the `FeedRunner` (market list, then live prices) and hands each
/// event to the evaluator's bounded inbox, in order, waiting while it is full. Graceful
/// shutdown stops the feed first (`STOPPING=1`, `/healthz` says so); the inbox is finished once
/// the feed has stopped, so the evaluator sees
/// every event the feed gave. A feed that ends by itself (a fatal error, logged by the runner)
/// ends the same way, and the group shuts down behind it.
final class FeedService: Service {
    let runner: FeedRunner
    let monitor: PipelineMonitor
    /// The status systemd and `/healthz` show while the pipeline drains.
    let stopping: String
    let inbox: Inbox<EvaluatorInput>

    init(runner: FeedRunner, monitor: PipelineMonitor, stopping: String, inbox: Inbox<EvaluatorInput>) {
        self.runner = runner
        self.monitor = monitor
        self.stopping = stopping
        self.inbox = inbox
    }

    func run() async {
        let (runner, monitor, stopping, inbox) = (self.runner, self.monitor, self.stopping, self.inbox)
        let feed = Task { await runner.runFeed { event in await inbox.send(.feed(event)) } }
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await feed.value
            } onGracefulShutdown: {
                monitor.shutdownBegan(status: stopping)
                feed.cancel()
            }
        } onCancel: {
            feed.cancel()
        }
        monitor.shutdownBegan(status: stopping)
        inbox.finish()
    }
}
