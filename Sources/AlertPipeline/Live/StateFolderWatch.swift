import AlertStore
import Logging
import Operations
import ServiceLifecycle
import Synchronization

/// Watches that the state folder `run` opened is still the one at its path (`StateStore.lost`:
/// the lock file's link count and inode, checked every `every`), or that a PostgreSQL store's
/// lock is still held (`DurableStore.lost`). A folder deleted or moved
/// away under the daemon would otherwise go unnoticed: saves and the outbox written to files
/// nobody reads, and a second pricealert free to lock the same path and deliver the same
/// alerts again. When it is lost this service logs an error, makes `/healthz` say so, and
/// returns, which shuts the group down (`successTerminationBehavior: .gracefullyShutdownGroup`);
/// the run then exits 73 (Docs/cli.md). Otherwise it returns at its turn in the shutdown.
final class StateFolderWatch: Service {
    let store: any DurableStore
    let every: Duration
    let logger: Logger
    let monitor: PipelineMonitor
    private let found = Mutex<String?>(nil)

    init(store: any DurableStore, every: Duration, logger: Logger, monitor: PipelineMonitor) {
        self.store = store
        self.every = every
        self.logger = logger
        self.monitor = monitor
    }

    /// Why the folder was lost, once the service has returned; nil when it was not.
    var lost: String? { found.withLock { $0 } }

    func run() async {
        let (store, every) = (self.store, self.every)
        let reason = await cancelWhenGracefulShutdown { () -> String? in
            while !Task.isCancelled {
                if let reason = await store.lost() { return reason }
                try? await Task.sleep(for: every)
            }
            return nil
        }
        guard let reason else {
            try? await gracefulShutdown()
            return
        }
        found.withLock { $0 = reason }
        monitor.status.failed(reason)
        let advice = store.localFolder == nil ? "" : ": restore the folder or start again with a state folder"
        logger.error("\(reason); stopping (exit 73)\(advice)")
    }
}
