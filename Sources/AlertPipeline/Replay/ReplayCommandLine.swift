import AlertModel
import AlertReport
import Platform

/// `replay` from its command line to its end: the rules, market lists, history and sinks
/// loaded, the ticks read ahead and evaluated (`ReplayRun`), the summary and the report written.
extension ReplayRun {
    /// What `replay`'s command line gave (Docs/cli.md#replay).
    public struct Request: Sendable {
        public var rules: [String]
        /// The recorded ticks (`-`: standard input).
        public var ticks: String
        public var history: String?
        /// `--markets` values, as given (`CommandInputs.marketOptions`).
        public var markets: [String]
        public var format: AlertOutputFormat
        /// Where the HTML report goes (nil: none).
        public var report: String?
        /// Alerts also go to the sinks the rules name.
        public var dispatch: Bool
        /// The state folder of `dispatch` (nil: the default one).
        public var state: String?

        public init(
            rules: [String], ticks: String, history: String?, markets: [String], format: AlertOutputFormat,
            report: String?, dispatch: Bool, state: String?
        ) {
            self.rules = rules
            self.ticks = ticks
            self.history = history
            self.markets = markets
            self.format = format
            self.report = report
            self.dispatch = dispatch
            self.state = state
        }
    }

    /// One `replay`. What ends it early is a `CommandFailure` (its exit status, Docs/cli.md,
    /// and what to say), or the read error of a tick file that fails while it is read (after
    /// everything read before it was listed and dispatched).
    public static func replay(_ request: Request) async throws {
        // The ticks are read and parsed on a thread of their own from the start, so while the
        // rules load; a history read from standard input comes first there, though.
        var ahead = request.ticks == "-" && request.history == "-" ? nil : TickReadAhead(path: request.ticks)
        defer { ahead?.stop() }
        let ruleSet = try CommandInputs.rules(request.rules)
        let marketFiles = try CommandInputs.marketOptions(request.markets, ruleSet: ruleSet)
        let marketList = try marketFiles.plain.map(CommandInputs.markets)
        var evaluator = Evaluator(
            ruleSet: ruleSet, markets: marketList,
            sourceMarkets: try CommandInputs.sourceMarkets(marketFiles.bySource, ruleSet: ruleSet))
        if evaluator.hasMatchRules, marketList == nil, marketFiles.bySource.isEmpty {
            Evaluator.noteNoMarketList()
        }
        let dispatcher: AlertDelivery? =
            if request.dispatch {
                try await AlertDelivery.setUp(
                    ruleSet: ruleSet, sinks: try CommandInputs.sinks(for: ruleSet), statePath: request.state)
            } else {
                nil
            }
        let read = try request.history.map { try CommandInputs.seedHistory($0, into: &evaluator) } ?? 0
        if ahead == nil { ahead = TickReadAhead(path: request.ticks) }
        let reader = ahead!
        do {
            try reader.opened()
        } catch {
            throw CommandFailure(.noInput, error: "\(error)")
        }
        var reportOutput = try request.report.map {
            try ReportOutput(path: $0, rules: ruleSet.rules, ruleFiles: request.rules, ticks: request.ticks)
        }

        let listing = AlertListing(
            format: request.format, dispatcher: dispatcher, printing: AlertListing.printingSinks(of: ruleSet),
            silences: try StateAccess.silences(request.state))
        var replay = ReplayRun(evaluator: consume evaluator, file: request.ticks, listing: listing, read: read)
        var page = reportOutput?.report
        let outcome = await replay.run(reader, report: &page)
        if let page { reportOutput?.report = page }
        if let readFailure = outcome.readFailure { throw readFailure }

        StandardError.write("replay: \(Summary.line(read: outcome.read, stats: replay.evaluator.stats))")
        if let policy = dispatcher?.policy.counts.summary { StandardError.write("replay: \(policy)") }
        try reportOutput?.write()
        if dispatcher?.unwritten != nil { throw CommandFailure(.cannotCreate) }
        if outcome.failures > 0 {
            throw CommandFailure(
                .ioError, lines: ["replay: \(outcome.failures) deliveries failed (see the errors above)"])
        }
    }
}
