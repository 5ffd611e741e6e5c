import AlertFeeds
import AlertModel
import ArgumentParser

/// `--source`, `--endpoint` and how the feed runs, shared by `run`, `markets` and `record`.
struct SourceOptions: ParsableArguments {
    @Option(help: "Where prices come from: \(SourceRegistry.names.joined(separator: ", ")).")
    var source: String

    @Option(help: "The source's REST base URL (its websocket URL follows: http→ws, https→wss), e.g. a local server.")
    var endpoint: String?

    func validate() throws {
        try Self.check(source: source, endpoint: endpoint)
    }

    /// A known source name and, when given, an http(s) endpoint (also for `check`, whose
    /// `--source` is optional).
    static func check(source: String, endpoint: String?) throws {
        guard SourceRegistry.names.contains(source) else {
            throw ValidationError(
                "unknown source \(UserText.single(source)); known: \(SourceRegistry.names.joined(separator: ", "))")
        }
        if let endpoint, !(endpoint.hasPrefix("http://") || endpoint.hasPrefix("https://")) {
            throw ValidationError("--endpoint must be an http:// or https:// URL")
        }
    }

    func make() throws -> any PriceSource {
        try SourceRegistry.make(source, endpoint: endpoint)
    }
}

struct FeedTuning: ParsableArguments {
    @Option(help: "No price for this long counts as a dead feed, which is logged and reconnected (e.g. 60s).")
    var staleAfter: DurationArgument = DurationArgument(.seconds(60))

    @Option(help: "How often the market list is reloaded (e.g. 1h).")
    var marketsEvery: DurationArgument = DurationArgument(.seconds(3600))

    var options: FeedOptions {
        FeedOptions(staleAfter: staleAfter.duration, marketsEvery: marketsEvery.duration)
    }
}

/// `--max-tick-skew`, for the commands that evaluate live ticks (`run`, `demo`, `check`).
struct TickSkewOption: ParsableArguments {
    @Option(
        help:
            "Refuse a live tick timed further ahead of the local clock than this, and take saved times beyond it as not seen (e.g. 5m)."
    )
    var maxTickSkew: DurationArgument = DurationArgument(FeedOptions.defaultMaxTickSkew)

    /// `options` with this skew.
    func applied(to options: FeedOptions) -> FeedOptions {
        var options = options
        options.maxTickSkew = maxTickSkew.duration
        return options
    }
}

/// A command-line duration in the rule files' syntax (`90s`, `1h30m`).
struct DurationArgument: ExpressibleByArgument, Sendable {
    var duration: Duration

    init(_ duration: Duration) {
        self.duration = duration
    }

    init?(argument: String) {
        guard let millis = DurationText.parse(argument), millis > 0 else { return nil }
        duration = .milliseconds(millis)
    }

    var defaultValueDescription: String { DurationText.format(duration.milliseconds) }
}
