import AlertFeeds
import AlertHTTP
import AlertModel
import AlertStore
import Platform

/// Where `check` takes its prices from, as its command line gave them: `--source` (with
/// `--endpoint`) or `--ticks`, the plain `--markets FILE` and the sources `--markets NAME=FILE`
/// named, `--markets-every`, and the rule files' sources (rules v3 §1).
public struct CheckPrices: Sendable {
    public var source: String?
    public var endpoint: String?
    /// The tick file (`-`: standard input); when set, no source is asked.
    public var ticks: String?
    /// The market list of ticks without a source (a BTSE `initial/market` payload).
    public var markets: String?
    /// The rule-file sources whose market list a `--markets NAME=FILE` gave.
    public var marketsGiven: Set<String>
    public var marketsEvery: Duration
    public var sources: [SourceDefinition]

    public init(
        source: String?, endpoint: String?, ticks: String?, markets: String?, marketsGiven: Set<String>,
        marketsEvery: Duration, sources: [SourceDefinition]
    ) {
        self.source = source
        self.endpoint = endpoint
        self.ticks = ticks
        self.markets = markets
        self.marketsGiven = marketsGiven
        self.marketsEvery = marketsEvery
        self.sources = sources
    }
}

extension CheckRun {
    /// The ticks to evaluate and the market list to use (nil: none): the tick file's, or the
    /// `--source` snapshot's, then one snapshot of each of `prices.sources` (the rule files'),
    /// whose ticks carry the source's name (rules v3 §1). `lines`: each tick's line in the tick
    /// file; `malformed`: lines that were not ticks, reported and counted by `evaluator`. Each
    /// rule-file source's market list goes to `evaluator` as that source's, unless
    /// `prices.marketsGiven` names it; it is fetched afresh each check, and when that fails the
    /// one `keeper` kept is followed (said on standard error); a fresh one is handed back in
    /// `Input.sourceMarkets`, to be kept with the state. A rule-file source that cannot be reached is named on
    /// standard error and added to `unavailable`; the other sources' ticks are still evaluated.
    /// An unreadable tick or market file exits 66 (65: not a market list), a `--source` that
    /// cannot be reached 69 (`CommandFailure`); a tick file that fails while it is read throws
    /// its read error.
    public static func input(
        _ prices: CheckPrices, saved: MarketsSave?, keeper: (any SourceMarketKeeper)? = nil,
        into evaluator: inout Evaluator, unavailable: inout [String]
    ) async throws -> Input {
        let now = Wallclock.millis()
        var list: MarketsSave? = saved
        if let markets = prices.markets {
            do {
                list = MarketsSave(markets: try BTSEMarketList.load(path: markets), source: markets, fetchedAt: now)
            } catch let error as BTSEMarketListError {
                throw CommandFailure(error.action == nil ? .dataError : .noInput, error: "\(error)")
            }
        }
        if let path = prices.ticks {
            let reader: TickFileReader
            do {
                reader = try TickFileReader(path: path)
            } catch {
                throw CommandFailure(.noInput, error: "\(error)")
            }
            let file = try evaluator.readTicks(from: reader, path: path)
            if evaluator.needsMarketList, list == nil, !evaluator.hasSourceMarkets { Evaluator.noteNoMarketList() }
            return Input(ticks: file.ticks, lines: file.lines, malformed: file.malformed, markets: list)
        }
        var input = Input(ticks: [], lines: nil, malformed: 0, markets: list)
        do {
            if let source = prices.source {
                input = try await snapshot(
                    from: try SourceRegistry.make(source, endpoint: prices.endpoint), http: NIOHTTPClient.shared,
                    markets: list,
                    refreshEvery: evaluator.needsMarketList && prices.markets == nil
                        ? prices.marketsEvery.milliseconds : nil,
                    now: now)
            }
        } catch let failure as SourceUnavailable {
            throw CommandFailure(.unavailable, error: "\(failure)")
        }
        for definition in prices.sources {
            do {
                let feed = try SourceRegistry.make(definition.type, endpoint: definition.endpoint)
                // Its market list (for `match` rules on its ticks) is fetched with the snapshot,
                // unless `--markets NAME=FILE` gave it.
                let fetchList = evaluator.needsMarketList && !prices.marketsGiven.contains(definition.name)
                var kept: MarketsSave?
                if fetchList, let keeper {
                    do {
                        kept = try await keeper.load(definition.name)
                    } catch {
                        StandardError.write(
                            "pricealert: warning: \(definition.name): \(error); no kept market list to fall back on")
                    }
                }
                let taken = try await snapshot(
                    from: feed, name: definition.name, http: NIOHTTPClient.shared, markets: kept,
                    refreshEvery: fetchList ? 0 : nil, now: now)
                if let list = taken.markets {
                    evaluator.updateMarkets(MarketList(list.markets), source: definition.name)
                    if list != kept { input.sourceMarkets.append(list) }
                }
                let sourceNumber = SourceNumber(definition.name)
                for var tick in taken.ticks {
                    tick.sourceNumber = sourceNumber
                    input.ticks.append(tick)
                }
            } catch let failure as SourceUnavailable {
                StandardError.write("pricealert: error: \(definition.name): \(failure.error)")
                unavailable.append(definition.name)
            } catch {
                StandardError.write("pricealert: error: \(definition.name): \(error)")
                unavailable.append(definition.name)
            }
        }
        return input
    }
}

extension CheckRun {
    /// Evaluates `restored.input`, the prices `prices` named, and dispatches (`run`): a
    /// `--source` snapshot backfills the history of its symbols that `restored.filled` says is
    /// missing; each tick's place in a report is its line in the tick file, else its source and
    /// symbol. Writes the summary line when something was dropped (`historyRead` history lines
    /// counted as read) and the count of failed deliveries, on standard error. Returns how many
    /// alerts fired; exits 73 when the state was not saved, then 69 when a rule-file source in
    /// `unavailable` could not be reached, then 74 when deliveries failed or wait in the outbox
    /// (each said on standard error as it happened).
    public mutating func evaluate(
        _ restored: Restored, prices: CheckPrices, historyRead: Int, unavailable: [String]
    ) async throws(CommandFailure) -> Int {
        let snapshot = restored.input.ticks
        let lines = restored.input.lines
        // The command line checked the source's name: making it cannot fail here.
        if let source = prices.source, prices.ticks == nil, let filled = restored.filled,
            let feed = try? SourceRegistry.make(source, endpoint: prices.endpoint)
        {
            backfill = (SourceCandles(source: feed, http: NIOHTTPClient.shared), filled)
        }
        let outcome: Outcome
        do {
            outcome = try await run(snapshot) { i, tick in
                if let lines {
                    .line(file: prices.ticks ?? "-", line: lines[i])
                } else {
                    .snapshot(source: tick.source ?? prices.source ?? "", symbol: tick.symbol)
                }
            }
        } catch {
            throw CommandFailure(.cannotCreate)
        }
        if evaluator.stats.droppedTotal > 0 {
            let read = historyRead + snapshot.count + restored.input.malformed
            StandardError.write("check: \(Summary.line(read: read, stats: evaluator.stats))")
        }
        if outcome.failures > 0 {
            StandardError.write("check: \(outcome.failures) deliveries failed or wait in the outbox")
        }
        if !unavailable.isEmpty { throw CommandFailure(.unavailable) }
        if outcome.failures > 0 { throw CommandFailure(.ioError) }
        return outcome.alerts
    }
}
