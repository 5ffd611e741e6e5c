import SeededRandom

/// The markets each look-alike lists: the demo catalog's, and with `perVenue` set, exactly that
/// many per look-alike, the catalog's first and then synthetic ones (Docs/exchange.md#more-markets).
/// A synthetic market is one made-up coin (`BOLKA`) listed on every look-alike against its
/// quote (`BOLKAUSDT`, `BOLKA-USD`, `BOLKA/USD`, …) and priced by the random walk like the others.
struct VenueMarkets: Sendable {
    private let lists: [Venue: [VenueMarket]]
    private let indexes: [Venue: [String: VenueMarket]]
    /// The synthetic coins, in listing order: the board's keys for their prices.
    let synthetic: [String]

    /// The look-alikes' markets: `perVenue` each (nil: the catalog's, about 155 each).
    init(perVenue: Int? = nil) {
        let demo = Dictionary(uniqueKeysWithValues: Venue.allCases.map { ($0, VenueMarket.demo($0)) })
        let shortest = demo.values.map(\.count).min() ?? 0
        let taken = Set(MarketCatalog.embedded.spot.flatMap { [$0.symbol.uppercased(), $0.base.uppercased()] })
        synthetic = Self.coinNames(count: max(0, (perVenue ?? 0) - shortest), avoiding: taken)
        var lists: [Venue: [VenueMarket]] = [:]
        for venue in Venue.allCases {
            var list = demo[venue] ?? []
            if let perVenue {
                list = Array(list.prefix(perVenue))
                let missing = perVenue - list.count
                list += synthetic.prefix(missing).map { VenueMarket(venue, board: $0, base: $0) }
            }
            lists[venue] = list
        }
        self.lists = lists
        indexes = lists.mapValues(VenueMarket.index)
    }

    /// The markets `venue` lists, in listing order.
    func all(_ venue: Venue) -> [VenueMarket] { lists[venue] ?? [] }

    /// `all(venue)` by the exchange's symbol.
    func index(_ venue: Venue) -> [String: VenueMarket] { indexes[venue] ?? [:] }

    /// `count` distinct made-up coin codes that look like real ones: 3 to 5 capital letters,
    /// consonants and vowels taking turns (`BOLKA`, `TEM`, `RUVI`), the same on every run and
    /// every machine. None is in `taken`, none begins with X or Z (Kraken's prefixes for its
    /// legacy asset names), and none contains two consonants in a row, so none reads as a
    /// quote currency (`USD`, `USDT`) glued to another code.
    static func coinNames(count: Int, avoiding taken: Set<String>) -> [String] {
        let consonants = Array("BCDFGHJKLMNPRSTVW"), vowels = Array("AEIOU")
        var random = SeededRandom(seed: 0x00C0_1DC0_1D5E_ED26)
        var names: [String] = []
        var seen = taken
        names.reserveCapacity(count)
        while names.count < count {
            let length = 3 + random.below(3)
            var consonant = random.below(3) > 0
            var name = ""
            for _ in 0..<length {
                let letters = consonant ? consonants : vowels
                name.append(letters[random.below(letters.count)])
                consonant.toggle()
            }
            if seen.insert(name).inserted { names.append(name) }
        }
        return names
    }
}
