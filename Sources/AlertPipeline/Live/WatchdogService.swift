import Operations
import ServiceLifecycle

/// systemd's watchdog (`WATCHDOG=1` while the feed is fresh, see `PipelineMonitor`), fed until
/// shutdown begins.
final class WatchdogService: Service {
    let monitor: PipelineMonitor

    init(monitor: PipelineMonitor) {
        self.monitor = monitor
    }

    func run() async {
        let monitor = self.monitor
        await cancelWhenGracefulShutdown { await monitor.keepWatchdogFed() }
        // Without a watchdog, or once shutdown began, the feeding ends early: a service returns
        // only at its turn in the group's shutdown.
        try? await gracefulShutdown()
    }
}
