import AlertCore
import AlertRules
import Logging
#if canImport(Glibc)
import Glibc
#endif
import UnixSignals

/// SIGHUP: re-read the rule files. A file with errors, or rules that need a sink the running
/// process did not open (sinks are opened at start), leave the running rules in place and log
/// every problem with its place; otherwise the new rules are handed on to be swapped in.
enum RuleReload {
    /// Called first thing by daemons: a SIGHUP that arrives while they start (before `listen`
    /// takes it over) is ignored instead of ending the process, as its default action would.
    static func ignoreUntilListening() {
        signal(SIGHUP, SIG_IGN)
    }

    static func listen(paths: [String], running: RuleSet, logger: Logger,
                       apply: @escaping @Sendable (RuleSet) -> Void) async {
        var current = running
        for await _ in await UnixSignalsSequence(trapping: .sighup) {
            guard !paths.isEmpty else {
                logger.warning("SIGHUP: the built-in rules have no file to re-read")
                continue
            }
            switch check(paths: paths, running: current) {
            case .success(let rules):
                current = rules
                apply(rules)
            case .failure(let problems):
                for problem in problems { logger.error("\(problem)") }
                logger.error("SIGHUP: \(problems.count) problem\(problems.count == 1 ? "" : "s") in the rule files; the running rules stay")
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
            let changed = rules.usedSinks.filter { name in opened.contains(name) == false || rules.sinks[name] != running.sinks[name] }
            guard changed.isEmpty else {
                return .failure(Problems(lines: changed.map {
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
