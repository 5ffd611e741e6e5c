import AlertFeeds
import DemoExchange
import Foundation

/// The ticker frame parsers of the five v3 exchanges on the look-alikes' own messages
/// (`VenueFrames`, as `Benchmarks/run-live.sh --sources 5` sends them: 600 markets a venue, 20
/// steps of the random walk), each frame read from its tokens and through the `FeedJSON` tree
/// (`FrameReading`), the two readings interleaved: round r runs the tree first when r is even,
/// the tokens first when it is odd. Figures are medians over the rounds.
enum FrameBenchmark {
    static func run(rounds: Int, markets: Int) {
        print("# frame parsers: \(rounds) rounds (tree and tokens interleaved), \(markets) markets a venue, 20 steps")
        for venue in Venue.allCases {
            let frames = VenueFrames.render(
                venue, marketsPerVenue: markets, seed: 1, steps: 20, time: 1_700_000_000_000
            ).map { Array($0.utf8) }
            let ticks = frames.reduce(0) { $0 + parse(venue, $1, .tokens) }
            precondition(ticks == frames.reduce(0) { $0 + parse(venue, $1, .tree) }, "the readings differ")
            // Each measurement reads about 300 000 ticks' worth of frames.
            let passes = max(1, 300_000 / max(ticks, 1))
            var seconds: [FrameReading: [Double]] = [.tree: [], .tokens: []]
            let clock = ContinuousClock()
            for round in 0..<rounds {
                for reading in round % 2 == 0 ? [FrameReading.tree, .tokens] : [.tokens, .tree] {
                    var checksum = 0
                    let elapsed = clock.measure {
                        for _ in 0..<passes {
                            for frame in frames { checksum &+= parse(venue, frame, reading) }
                        }
                    }
                    precondition(checksum == ticks * passes)
                    seconds[reading]!.append(
                        Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
                }
            }
            let messages = Double(frames.count * passes)
            let perTick = Double(ticks) / Double(frames.count)
            let tree = median(seconds[.tree]!) / messages * 1e9
            let tokens = median(seconds[.tokens]!) / messages * 1e9
            print(
                "\(venue.rawValue): \(frames.count) frames, \(String(format: "%.0f", perTick)) ticks/frame; "
                    + "tree \(format(tree)) ns/frame (\(format(tree / perTick)) ns/tick), "
                    + "tokens \(format(tokens)) ns/frame (\(format(tokens / perTick)) ns/tick), "
                    + "tokens/tree \(String(format: "%.2f", tokens / tree))"
            )
        }
    }

    /// The ticks of one frame as `reading` reads it.
    static func parse(_ venue: Venue, _ frame: [UInt8], _ reading: FrameReading) -> Int {
        let parsed: ExchangeFrame
        switch venue {
        case .binance: parsed = BinanceTicker.parse(frame, reading: reading)
        case .coinbase: parsed = CoinbaseTicker.read(frame, reading: reading).frame
        case .kraken: parsed = KrakenTicker.parse(frame, reading: reading)
        case .bybit: parsed = BybitTicker.parse(frame, reading: reading)
        case .okx: parsed = OKXTicker.parse(frame, reading: reading)
        }
        if case .ticks(let ticks, _) = parsed { return ticks.count }
        return 0
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    static func format(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f", value) : String(format: "%.1f", value)
    }
}
