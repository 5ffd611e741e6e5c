import Platform
import Synchronization

/// Drives the price generator: on the first client interest it starts a loop that applies each
/// step to the market board and broadcasts it as a coinIndex frame (or an invalid frame, or
/// nothing while silenced). Starting lazily makes a fresh server deterministic per seed.
final class PriceFeed: Sendable {
    private struct State {
        var generator: (any PriceGenerator)?
        var board: MarketBoard
        var task: Task<Void, Never>?
        /// Epoch ms of the first step, once started.
        var startedAt: Int64?
    }

    private let state: Mutex<State>
    private let hub: ConnectionHub
    private let stats: StatsCounter
    private let faults: FaultSettings
    private let listing: NewMarket.Listing
    /// Paces the steps and times the silence fault.
    private let clock: any Clock<Duration>
    /// Symbols only the look-alikes list (the synthetic markets): left out of BTSE's frames.
    private let lookalikeOnly: Set<String>

    init(
        generator: any PriceGenerator, board: MarketBoard, hub: ConnectionHub, stats: StatsCounter,
        faults: FaultSettings, listing: NewMarket.Listing, clock: any Clock<Duration>,
        lookalikeOnly: Set<String> = []
    ) {
        self.lookalikeOnly = lookalikeOnly
        state = Mutex(State(generator: generator, board: board))
        self.clock = clock
        self.hub = hub
        self.stats = stats
        self.faults = faults
        self.listing = listing
    }

    var board: MarketBoard { state.withLock { $0.board } }

    /// Epoch ms of the first step; nil before the feed started.
    var startedAt: Int64? { state.withLock { $0.startedAt } }

    /// Starts the loop once; later calls do nothing. The first step is applied before this
    /// returns, so a `market_summary` that triggers the start already shows it.
    func startIfNeeded() {
        state.withLock { state in
            guard var generator = state.generator else { return }
            state.generator = nil
            guard let first = generator.next() else { return }
            state.startedAt = Wallclock.millis()
            state.board.apply(first)
            let rest = generator
            let clock = clock
            state.task = Task { [self] in await self.run(first: first, rest: rest, on: clock) }
        }
    }

    /// Applies `step` to the board and broadcasts it now, beside the generator's steps.
    func send(_ step: PriceStep) {
        state.withLock { $0.board.apply(step) }
        hub.broadcast(.price(Frames.coinIndex(step.prices)))
        broadcastUpdate(step.prices)
    }

    /// Sends the look-alikes the markets of `prices` with their figures on the board now.
    private func broadcastUpdate(_ prices: [(symbol: String, price: Double)]) {
        let entries = state.withLock { state in
            prices.compactMap { symbol, _ in state.board.entries[symbol].map { (symbol, $0) } }
        }
        hub.broadcast(.update(BoardUpdate(entries: entries, time: Wallclock.millis())))
    }

    func stop() async {
        let task = state.withLock { $0.task }
        task?.cancel()
        await task?.value
    }

    private func run<C: Clock<Duration>>(first: PriceStep, rest: any PriceGenerator, on clock: C) async {
        var generator = rest
        let start = clock.now
        var due = start
        var step = first
        var framesDue = 0, invalidSent = 0
        while !Task.isCancelled {
            stats.update { $0.priceSteps += 1 }
            let faults = faults.current
            if !faults.isSilent(at: start.duration(to: clock.now)) {
                framesDue += 1
                if faults.invalidEvery > 0, framesDue % faults.invalidEvery == 0 {
                    invalidSent += 1
                    hub.broadcast(.invalid(Frames.invalid(invalidSent)))
                } else {
                    // A listed new market is priced in every frame from then on.
                    var prices =
                        lookalikeOnly.isEmpty ? step.prices : step.prices.filter { !lookalikeOnly.contains($0.symbol) }
                    if listing.isListed { prices.append((NewMarket.market.symbol, NewMarket.price)) }
                    hub.broadcast(.price(Frames.coinIndex(prices)))
                    broadcastUpdate(step.prices)
                }
            }
            due = due.advanced(by: step.delay)
            if step.delay > .zero {
                do { try await clock.sleep(until: due, tolerance: nil) } catch { return }
            } else {
                await Task.yield()
            }
            guard let next = generator.next() else { return }
            state.withLock { $0.board.apply(next) }
            step = next
        }
    }
}
