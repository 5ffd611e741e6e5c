import AlertFeeds
import AlertHTTP
import AlertModel
import AlertStore
import Platform

/// What `check` evaluates, before `CheckRun` runs: a tick file's ticks, or a source's snapshot
/// with the market list its `match` and `listed` rules need.
extension CheckRun {
    /// The market list `check` uses when the rules need one and `--markets` gave none: `kept`
    /// (the one saved in the state folder or store) while it is the list of `name` (default:
    /// `feed`'s name; a rule-file source's name) and younger than `every` (ms); otherwise a
    /// fresh one from `feed`. A fetch that fails keeps `kept` when it is `name`'s (said with a
    /// warning on standard error), and otherwise throws its error. A kept list used is given to
    /// `feed` too, which maps the exchange's symbols of its snapshot by it.
    public static func marketList(
        kept: MarketsSave?, from feed: any PriceSource, name: String? = nil, http: any HTTPClient,
        now: Int64, every: Int64
    ) async throws -> MarketsSave? {
        let name = name ?? feed.name
        if let kept, kept.source == name, now - kept.fetchedAt < every {
            _ = feed.adopt(savedMarkets: kept.markets)
            return kept
        }
        do {
            return MarketsSave(markets: try await feed.loadMarkets(http: http), source: name, fetchedAt: now)
        } catch {
            guard let kept, kept.source == name else { throw error }
            _ = feed.adopt(savedMarkets: kept.markets)
            StandardError.write(
                "pricealert: warning: \(name): \(error); using the market list saved \(Timestamp.format(kept.fetchedAt))"
            )
            return kept
        }
    }
}

/// A source that could not give `check` its market list or its snapshot (exit 69).
public struct SourceUnavailable: Error, CustomStringConvertible {
    /// The source's name.
    public let source: String
    public let error: any Error

    public var description: String { "\(source): \(error)" }
}

extension CheckRun {
    /// The snapshot of `check --source` from `feed`, with its market list: `given` (the
    /// `--markets` file's, else the saved one) as it is when `refreshEvery` is nil; otherwise
    /// `marketList(kept: given, …)`, fetched again when older than `refreshEvery` (ms). The list
    /// is fetched before the snapshot; either failing throws `SourceUnavailable`.
    public static func snapshot(
        from feed: any PriceSource, name: String? = nil, http: any HTTPClient, markets given: MarketsSave?,
        refreshEvery: Int64?, now: Int64
    ) async throws(SourceUnavailable) -> Input {
        do {
            var list = given
            if let refreshEvery {
                list = try await marketList(
                    kept: given, from: feed, name: name, http: http, now: now, every: refreshEvery)
            }
            let ticks = try await feed.snapshot(http: http)
            return Input(ticks: ticks, lines: nil, malformed: 0, markets: list)
        } catch {
            throw SourceUnavailable(source: feed.name, error: error)
        }
    }
}

extension Evaluator {
    /// The rules need a market list: some are scoped by `match` or fire on new listings.
    public var needsMarketList: Bool { hasMatchRules || watchesListings }

    /// The ticks of the tick file `reader` reads (`path` names it), with each tick's line;
    /// a line that is not a tick is reported on standard error at FILE:LINE, counted by the
    /// evaluator (as `malformed`) and skipped. Rethrows what reading the file throws.
    public mutating func readTicks(
        from reader: borrowing TickFileReader, path: String
    ) throws
        -> (ticks: [Tick], lines: [Int], malformed: Int)
    {
        var ticks: [Tick] = []
        var lines: [Int] = []
        var malformed = 0
        try reader.forEachLine { line, parsed in
            switch parsed {
            case .failure(let error):
                malformed += 1
                StandardError.write(reject(error.message, at: .line(file: path, line: line)).description)
            case .success(let tick):
                ticks.append(tick)
                lines.append(line)
            }
        }
        return (ticks, lines, malformed)
    }
}
