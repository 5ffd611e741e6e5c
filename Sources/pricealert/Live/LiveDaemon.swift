import AlertCore
import AlertFeeds
import AlertRules
import Daemon
import Logging

/// `run` and `demo` as a daemon: the pipeline under `Lifecycle` (SIGTERM/SIGINT drain), with
/// systemd notifications when `$NOTIFY_SOCKET` is set and `/metrics` + `/healthz` with `--listen`.
enum LiveDaemon {
    static func run(ruleSet: RuleSet, runner: FeedRunner, delivery: AlertDelivery, options: DaemonOptions,
                    duration: Duration?, logger: Logger, rulePaths: [String] = [], saved: SavedState = SavedState([]),
                    saveEvery: Duration = .seconds(60)) async throws -> LivePipeline.Outcome {
        let registry = options.listen.map { _ in PrometheusMetrics.bootstrap() }
        let monitor = PipelineMonitor(source: runner.source.name, rules: ruleSet.rules.map(\.id),
                                      staleAfter: runner.staleLimit, notifier: .fromProcessEnvironment(), logger: logger)
        var server: StatusServer?
        if let listen = options.listen, let registry {
            let status = StatusServer(host: listen.host, port: listen.port, registry: registry, status: monitor.status,
                                      logger: logger) { monitor.refresh(outboxDepth: await delivery.outboxDepth()) }
            do {
                let port = try await status.start()
                let bound = ListenAddress(host: listen.host, port: port)
                logger.notice("listening on http://\(bound) (/metrics, /healthz)")
            } catch {
                StandardError.write("pricealert: error: cannot listen on \(listen): \(error)")
                throw ExitCodes.unavailable
            }
            server = status
        }
        let pipeline = LivePipeline(ruleSet: ruleSet, runner: runner, delivery: delivery, logger: logger,
                                    monitor: monitor, drainTimeout: options.drainTimeout.duration,
                                    rulePaths: rulePaths, saved: saved, saveEvery: saveEvery)
        let outcome = try await Lifecycle.run(logger: logger) {
            await Lifecycle.limited(to: duration) { await pipeline.run() }
        }
        await server?.stop()
        return outcome
    }
}
