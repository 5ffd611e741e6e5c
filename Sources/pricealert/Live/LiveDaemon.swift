import AlertFeeds
import AlertModel
import AlertPipeline
import AlertRules
import Logging
import Operations
import Platform

/// `run` and `demo` as a daemon: the pipeline's services (SIGTERM/SIGINT drain), with systemd
/// notifications when `$NOTIFY_SOCKET` is set and `/metrics` + `/healthz` with `--listen`.
enum LiveDaemon {
    static func run(
        ruleSet: RuleSet, runner: FeedRunner, delivery: AlertDelivery, options: DaemonOptions,
        duration: Duration?, logger: Logger, rulePaths: [String] = [], saved: SavedState = SavedState([]),
        saveEvery: Duration = .seconds(60)
    ) async throws -> LivePipeline.Outcome {
        let registry = options.listen.map { _ in PrometheusMetrics.bootstrap() }
        let monitor = PipelineMonitor(
            source: runner.source.name, rules: ruleSet.rules.map(\.id),
            staleAfter: runner.staleLimit, notifier: .fromProcessEnvironment(), logger: logger)
        var pipeline = LivePipeline(
            ruleSet: ruleSet, runner: runner, delivery: delivery, logger: logger, monitor: monitor)
        if let listen = options.listen, let registry {
            let status = StatusServer(
                host: listen.host, port: listen.port, registry: registry, status: monitor.status,
                logger: logger
            ) { monitor.refresh(outboxDepth: await delivery.outboxDepth()) }
            do {
                let port = try await status.start()
                let bound = ListenAddress(host: listen.host, port: port)
                logger.notice("listening on http://\(bound) (/metrics, /healthz)")
            } catch {
                StandardError.write("pricealert: error: cannot listen on \(listen): \(ListenFailure.reason(error))")
                throw ExitCodes.unavailable
            }
            pipeline.statusServer = status
        }
        pipeline.drainTimeout = options.drainTimeout.duration
        pipeline.rulePaths = rulePaths
        pipeline.saved = saved
        pipeline.saveEvery = saveEvery
        if let folder = delivery.store?.folder {
            pipeline.silenceWatcher = SilenceWatcher(folder: folder, logger: logger, apply: delivery.policy.use)
        }
        if let duration {
            pipeline.stop = { try? await Task.sleep(for: duration) }
        }
        return try await pipeline.run()
    }
}
