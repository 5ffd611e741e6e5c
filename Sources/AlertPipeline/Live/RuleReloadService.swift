import AlertModel
import AlertRules
import AlertSinks
import Logging
import ServiceLifecycle
import UnixSignals

#if canImport(Glibc)
import Glibc
#endif

/// SIGHUP: re-read the rule files. A file with errors, or rules that need a sink the running
/// process did not open (sinks are opened at start), leave the running rules in place and log
/// every problem with its place; otherwise the new rules go to the evaluator's inbox, behind
/// the feed events before them, to be swapped in, and then the sources the files define are
/// followed: added ones start, removed or changed ones stop, the others keep their connection.
final class RuleReloadService: Service {
    let paths: [String]
    let running: RuleSet
    let logger: Logger
    let inbox: Inbox<EvaluatorInput>
    /// What asks for a reload instead of SIGHUP (nil: SIGHUP).
    let requests: (any AsyncSequence<Void, Never> & Sendable)?
    /// The feeds of the rule files' sources (nil: those are not followed).
    let sources: FeedRoster?

    init(
        paths: [String], running: RuleSet, logger: Logger, inbox: Inbox<EvaluatorInput>,
        requests: (any AsyncSequence<Void, Never> & Sendable)?, sources: FeedRoster?
    ) {
        self.sources = sources
        self.paths = paths
        self.running = running
        self.logger = logger
        self.inbox = inbox
        self.requests = requests
    }

    func run() async {
        let (paths, running, logger, inbox, requests, sources) = (
            self.paths, self.running, self.logger, self.inbox, self.requests, self.sources
        )
        await cancelWhenGracefulShutdown {
            let apply: @Sendable (RuleSet) async -> Void = {
                await inbox.send(.reload($0))
                await sources?.apply($0)
            }
            if let requests {
                await RuleReload.listen(
                    paths: paths, running: running, logger: logger, requests: requests, apply: apply)
            } else {
                let signals = await UnixSignalsSequence(trapping: .sighup).map { _ in () }
                await RuleReload.listen(paths: paths, running: running, logger: logger, requests: signals, apply: apply)
            }
        }
    }
}

public enum RuleReload {
    /// Called first thing by daemons. SIGHUP's default action ends the process, and the reload
    /// service's `UnixSignalsSequence` takes the signal over only once the service group runs
    /// it: a SIGHUP in between (while the rules and the state folder load and the services
    /// start) is ignored instead. This is the one raw `signal()` call: UnixSignals has no way to
    /// ignore a signal before it traps it.
    public static func ignoreUntilListening() {
        signal(SIGHUP, SIG_IGN)
    }

    static func listen(
        paths: [String], running: RuleSet, logger: Logger, requests: some AsyncSequence<Void, Never>,
        apply: @escaping @Sendable (RuleSet) async -> Void
    ) async {
        var current = running
        for await _ in requests {
            guard !paths.isEmpty else {
                logger.warning("SIGHUP: the built-in rules have no file to re-read")
                continue
            }
            switch check(paths: paths, running: current) {
            case .success(let rules):
                current = rules
                await apply(rules)
            case .failure(let problems):
                for problem in problems { logger.error("\(problem)") }
                logger.error(
                    "SIGHUP: \(problems.count) problem\(problems.count == 1 ? "" : "s") in the rule files; the running rules stay"
                )
            }
        }
    }

    /// The reloaded rules, or every reason they cannot replace `running`.
    static func check(paths: [String], running: RuleSet) -> Result<RuleSet, Problems> {
        switch RuleLoader.loadFiles(paths: paths) {
        case .failure(.unreadable(let problems)):
            return .failure(Problems(lines: problems.map(\.description)))
        case .failure(.invalid(let errors)):
            return .failure(Problems(lines: errors.diagnostics.map(\.description)))
        case .success(let rules):
            let opened = running.usedSinks
            let changed = rules.usedSinks.filter { name in
                opened.contains(name) == false || rules.sinks[name] != running.sinks[name]
            }
            guard changed.isEmpty else {
                return .failure(
                    Problems(
                        lines: changed.map {
                            "sink \(UserText.single($0)) is new or changed; sinks are opened at start: restart pricealert to use it"
                        }))
            }
            return .success(rules)
        }
    }

    struct Problems: Error, Sequence {
        var lines: [String]
        var count: Int { lines.count }
        func makeIterator() -> IndexingIterator<[String]> { lines.makeIterator() }
    }
}
