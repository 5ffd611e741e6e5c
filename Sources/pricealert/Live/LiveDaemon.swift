import AlertFeeds
import AlertModel
import AlertPipeline
import AlertRules
import Logging
import Platform

/// `run` and `demo` as a daemon (`LivePipeline.daemon`); exits 69 when `--listen` cannot listen.
enum LiveDaemon {
    static func run(
        ruleSet: RuleSet, feeds: [LiveFeed], feedOptions: FeedOptions,
        makeRunner: (@Sendable (SourceDefinition) throws -> FeedRunner)? = nil, delivery: AlertDelivery,
        options: DaemonOptions, duration: Duration?, logger: Logger, rulePaths: [String] = [],
        saved: SavedState = SavedState([]), saveEvery: Duration = .seconds(60), roles: InstanceRoles? = nil
    ) async throws -> LivePipeline.Outcome {
        let pipeline: LivePipeline
        do {
            pipeline = try await LivePipeline.daemon(
                ruleSet: ruleSet, feeds: feeds, feedOptions: feedOptions, makeRunner: makeRunner, delivery: delivery,
                logger: logger, listen: options.listen,
                drainTimeout: options.drainTimeout.duration, duration: duration, rulePaths: rulePaths, saved: saved,
                saveEvery: saveEvery, roles: roles)
        } catch {
            StandardError.write("pricealert: error: \(error)")
            throw ExitCodes.unavailable
        }
        return try await pipeline.run()
    }
}
