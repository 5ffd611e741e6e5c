import AlertFeeds
import AlertModel

/// Recorded ticks replayed as frames: consecutive ticks with the same time and distinct
/// symbols share a frame (a coinIndex frame holds one price per symbol); the pause after a
/// frame is the recorded gap to the next one divided by `speed` (0: no pause).
struct TickReplay: PriceGenerator {
    private let ticks: [Tick]
    private let speed: Double
    private var position = 0

    init(ticks: [Tick], speed: Double) {
        self.ticks = ticks
        self.speed = speed
    }

    mutating func next() -> PriceStep? {
        guard position < ticks.count else { return nil }
        let time = ticks[position].time
        var prices: [(symbol: String, price: Double)] = []
        var seen = Set<String>()
        while position < ticks.count, ticks[position].time == time {
            let symbol = Symbol.normalize(ticks[position].symbol)
            if !seen.insert(symbol).inserted { break }
            prices.append((symbol, ticks[position].price))
            position += 1
        }
        var delay = Duration.zero
        if position < ticks.count, speed > 0 {
            let gap = max(0, ticks[position].time - time)
            delay = .milliseconds(Double(gap) / speed)
        }
        return PriceStep(prices: prices, delay: delay)
    }

    /// Reads a tick file (JSON Lines, `-` for standard input). Lines that are not ticks are
    /// skipped and counted, as `pricealert replay` does.
    static func load(path: String) throws -> (ticks: [Tick], skipped: Int) {
        let reader = try TickFileReader(path: path)
        var ticks: [Tick] = []
        var skipped = 0
        try reader.forEachLine { _, result in
            switch result {
            case .success(let tick): ticks.append(tick)
            case .failure: skipped += 1
            }
        }
        return (ticks, skipped)
    }
}
