import AlertFeeds
import AlertModel
import AlertRules
import Logging
import Operations

/// `HOST:PORT`, `[IPv6]:PORT`: where `--listen` serves `/metrics` and `/healthz`.
public struct ListenAddress: Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// The status server could not listen (`run` and `demo` exit 69).
public struct ListenUnavailable: Error, CustomStringConvertible {
    public let address: ListenAddress
    public let error: any Error

    public var description: String { "cannot listen on \(address): \(ListenFailure.reason(error))" }
}

extension LivePipeline {
    /// `run` and `demo` as a daemon: the pipeline's services (SIGTERM/SIGINT drain), with
    /// systemd notifications when `$NOTIFY_SOCKET` is set, `/metrics` + `/healthz` on `listen`
    /// (its server started here, so that an address in use ends the run before the feed
    /// starts), the silences file watched when there is a state folder, and a stop after
    /// `duration` when given.
    /// `feeds`: the `--source` feed, then the rule files' sources; `makeRunner` makes the
    /// feed of a source a reload adds (nil: none is added).
    public static func daemon(
        ruleSet: RuleSet, feeds: [LiveFeed], feedOptions: FeedOptions,
        makeRunner: (@Sendable (SourceDefinition) throws -> FeedRunner)?, delivery: AlertDelivery, logger: Logger,
        listen: ListenAddress?, drainTimeout: Duration, duration: Duration?,
        rulePaths: [String], saved: SavedState, saveEvery: Duration, roles: InstanceRoles? = nil
    ) async throws(ListenUnavailable) -> LivePipeline {
        let registry = listen.map { _ in PrometheusMetrics.bootstrap() }
        let monitor = PipelineMonitor(
            rules: ruleSet.rules.map(\.id), notifier: .fromProcessEnvironment(), logger: logger)
        var pipeline = LivePipeline(
            ruleSet: ruleSet, feeds: feeds, feedOptions: feedOptions, delivery: delivery, logger: logger,
            monitor: monitor)
        pipeline.makeRunner = makeRunner
        if let listen, let registry {
            let status = StatusServer(
                host: listen.host, port: listen.port, registry: registry, status: monitor.status,
                logger: logger
            ) { monitor.refresh(outboxDepth: await delivery.outboxDepth()) }
            do {
                let port = try await status.start()
                let bound = ListenAddress(host: listen.host, port: port)
                logger.notice("listening on http://\(bound) (/metrics, /healthz)")
            } catch {
                throw ListenUnavailable(address: listen, error: error)
            }
            pipeline.statusServer = status
        }
        pipeline.drainTimeout = drainTimeout
        pipeline.rulePaths = rulePaths
        pipeline.saved = saved
        pipeline.saveEvery = saveEvery
        pipeline.roles = roles
        if let store = delivery.store {
            pipeline.silenceWatcher = SilenceWatcher(store: store, logger: logger, apply: delivery.policy.use)
        }
        if let duration {
            pipeline.stop = { try? await Task.sleep(for: duration) }
        }
        return pipeline
    }
}
