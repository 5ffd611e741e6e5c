import AlertModel
import Platform

/// A look-alike's ticker messages rendered ahead of time, by the same code that renders them for
/// a connection: for a benchmark that sends them to a client as fast as its socket takes them
/// (`Benchmarks/LiveBenchmark`), so that the client's cost is measured and not the exchange's.
public enum VenueFrames {
    /// The websocket messages a connection of `venue` following every market it lists (at most
    /// 1024 on Binance, its limit per connection) receives over `steps` steps of the random walk
    /// of `seed`, in order, every message stamped `time` (epoch ms). `marketsPerVenue` as
    /// `ExchangeConfiguration.marketsPerVenue`.
    public static func render(
        _ venue: Venue, marketsPerVenue: Int?, seed: UInt64, steps: Int, time: Int64 = Wallclock.millis()
    ) -> [String] {
        let markets = VenueMarkets(perVenue: marketsPerVenue)
        let symbols = MarketCatalog.embedded.spot.map(\.symbol) + markets.synthetic
        var walk = RandomWalk(symbols: symbols, seed: seed, interval: .seconds(1))
        let board = MarketBoard(symbols: symbols, startPrices: walk.publishedPrices, seed: seed)
        // A feed with no steps to send never starts: the connections read its board for their
        // snapshots, and it runs nothing.
        let feed = PriceFeed(
            generator: TickReplay(ticks: [], speed: 0), board: board, hub: ConnectionHub(), stats: StatsCounter(),
            faults: FaultSettings(ExchangeFaults()), listing: NewMarket.Listing(after: nil), clock: ContinuousClock())
        let context = VenueContext(
            feed: feed, keepAlive: KeepAliveSettings(), faults: FaultSettings(ExchangeFaults()),
            prices: .replay(ticks: [], speed: 0), markets: markets, walkSymbols: symbols)
        let listed = markets.all(venue)
        let connection: any VenueConnection
        let subscribes: [String]
        switch venue {
        case .binance:
            connection = BinanceConnection(
                index: markets.index(venue), combined: false, streams: [], context: context)
            let streams = listed.prefix(Binance.maxStreams).map { VenueText.quote($0.symbol.lowercased() + "@ticker") }
            subscribes = [#"{"method":"SUBSCRIBE","params":[\#(streams.joined(separator: ","))],"id":1}"#]
        case .coinbase:
            connection = CoinbaseConnection(index: markets.index(venue), context: context)
            let ids = listed.map { VenueText.quote($0.symbol) }.joined(separator: ",")
            subscribes = [#"{"type":"subscribe","product_ids":[\#(ids)],"channel":"ticker"}"#]
        case .kraken:
            connection = KrakenConnection(index: markets.index(venue), context: context)
            let ids = listed.map { VenueText.quote($0.symbol) }.joined(separator: ",")
            subscribes = [#"{"method":"subscribe","params":{"channel":"ticker","symbol":[\#(ids)]}}"#]
        case .bybit:
            connection = BybitConnection(index: markets.index(venue), context: context)
            subscribes = stride(from: 0, to: listed.count, by: Bybit.maxArgs).map { start in
                let args = listed[start..<min(start + Bybit.maxArgs, listed.count)].map {
                    VenueText.quote("tickers." + $0.symbol)
                }
                return #"{"op":"subscribe","args":[\#(args.joined(separator: ","))]}"#
            }
        case .okx:
            connection = OKXConnection(index: markets.index(venue), context: context)
            let args = listed.map { #"{"channel":"tickers","instId":\#(VenueText.quote($0.symbol))}"# }
            subscribes = [#"{"op":"subscribe","args":[\#(args.joined(separator: ","))]}"#]
        }
        for message in subscribes { _ = connection.received(message, age: .zero, now: time) }
        var current = board
        var frames: [String] = []
        for _ in 0..<steps {
            guard let step = walk.next() else { break }
            current.apply(step)
            let entries = step.prices.compactMap { symbol, _ in current.entries[symbol].map { (symbol, $0) } }
            // Numbered as written (Coinbase's `sequence_num`), in order, as a connection does.
            frames += connection.render(BoardUpdate(entries: entries, time: time)).map(connection.stamped)
        }
        return frames
    }
}
