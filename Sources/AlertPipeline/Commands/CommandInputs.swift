import AlertFeeds
import AlertModel
import AlertRules
import AlertSinks
import AlertStore

/// Loading what the commands need, each problem a `CommandFailure` that names its place.
public enum CommandInputs {
    /// Loads rule files together (`RuleFiles.load`); every problem, with its place, fails with
    /// exit 65 (66 when a file cannot be read).
    public static func rules(_ paths: [String]) throws(CommandFailure) -> RuleSet {
        try rules(RuleFiles.load(paths))
    }

    /// `rules(paths)` through the rules cache of `check` (`RuleFiles.load(_:cache:)`):
    /// `missedKey` is the key to store the rule set under once the state folder is open.
    public static func rules(
        _ paths: [String], cache: RuleCache?
    ) throws(CommandFailure) -> (RuleSet, missedKey: [UInt8]?) {
        try rules(RuleFiles.load(paths, cache: cache))
    }

    /// What loading gave, or every problem and the exit (65, 66).
    public static func rules<T>(_ result: Result<T, RuleLoadFailure>) throws(CommandFailure) -> T {
        switch result {
        case .success(let loaded):
            return loaded
        case .failure(.unreadable(let problems)):
            throw CommandFailure(.noInput, lines: problems.map(\.description))
        case .failure(.invalid(let errors)):
            throw CommandFailure(.dataError, lines: errors.diagnostics.map(\.description))
        }
    }

    /// `--markets` values: `FILE`, the market list of ticks without a source (a BTSE
    /// `initial/market` payload), at most once; `NAME=FILE`, the market list of the rule-file
    /// source `NAME` in its exchange's own REST format (rules v3 §3). A `NAME=` that names no
    /// source of the rule files is an error (exit 64) listing the sources there are.
    public static func marketOptions(
        _ values: [String], ruleSet: RuleSet
    ) throws(CommandFailure) -> (plain: String?, bySource: [String: String]) {
        var plain: String?
        var bySource: [String: String] = [:]
        let defined = Set(ruleSet.sources.map(\.name))
        for value in values {
            if let equals = value.firstIndex(of: "="),
                value[..<equals].allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }),
                !value[..<equals].isEmpty
            {
                let name = String(value[..<equals])
                guard defined.contains(name) else {
                    let known =
                        defined.isEmpty
                        ? "the rule files define none" : "defined: \(defined.sorted().joined(separator: ", "))"
                    throw CommandFailure(
                        .usage, error: "--markets \(value): no source '\(name)' in the rule files (\(known))")
                }
                guard bySource.updateValue(String(value[value.index(after: equals)...]), forKey: name) == nil else {
                    throw CommandFailure(.usage, error: "--markets \(name)=… is given twice")
                }
            } else {
                guard plain == nil else {
                    throw CommandFailure(
                        .usage, error: "--markets FILE (the list of ticks without a source) is given twice")
                }
                plain = value
            }
        }
        return (plain, bySource)
    }

    /// The market lists of `NAME=FILE` (see `marketOptions`), each read in the format of its
    /// source's type; fails with exit 66 when a file is unreadable, 65 when it is not such a
    /// list, naming it.
    public static func sourceMarkets(
        _ files: [String: String], ruleSet: RuleSet
    ) throws(CommandFailure) -> [String: MarketList] {
        var lists: [String: MarketList] = [:]
        for (name, path) in files.sorted(by: { $0.key < $1.key }) {
            let type = ruleSet.sources.first { $0.name == name }?.type ?? name
            do {
                lists[name] = MarketList(try MarketListFile.load(path: path, type: type))
            } catch {
                throw CommandFailure(error.action == nil ? .dataError : .noInput, error: "--markets \(name): \(error)")
            }
        }
        return lists
    }

    /// Loads a BTSE `initial/market` payload; fails with exit 66 when unreadable, 65 when not a
    /// market list.
    public static func markets(_ path: String) throws -> MarketList {
        do {
            return MarketList(try BTSEMarketList.load(path: path))
        } catch let error as BTSEMarketListError {
            throw CommandFailure(error.action == nil ? .dataError : .noInput, error: "\(error)")
        }
    }

    /// Opens a tick file (`-`: standard input); fails with exit 66 naming it when it cannot be read.
    public static func ticks(_ path: String) throws(CommandFailure) -> TickFileReader {
        do {
            return try TickFileReader(path: path)
        } catch {
            throw CommandFailure(.noInput, error: "\(error)")
        }
    }

    /// `--history FILE` seeded into `evaluator` (`Evaluator.seedHistory`); fails with exit 66 naming it
    /// when it cannot be read, and rethrows a read error that ends it early. Returns the number
    /// of lines read.
    public static func seedHistory(_ path: String, into evaluator: inout Evaluator) throws -> Int {
        let reader = try ticks(path)
        return try evaluator.seedHistory(from: reader, path: path)
    }

    /// Opens the sinks that enabled rules notify (a sink nobody uses is never opened);
    /// fails with exit 73 naming the sink when one cannot be set up.
    public static func sinks(for ruleSet: RuleSet) throws(CommandFailure) -> [String: any Sink] {
        do {
            return try SinkFactory.makeAll(ruleSet.usedSinks.compactMap { ruleSet.sinks[$0] })
        } catch {
            throw CommandFailure(.cannotCreate, error: "\(error)")
        }
    }
}
