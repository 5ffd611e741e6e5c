import AlertFeeds
import AlertModel
import Foundation

/// The embedded market list, decoded once: the payload as served, and its spot markets,
/// which get prices (`coinIndex` and `market_summary` list spot markets only).
struct MarketCatalog: Sendable {
    /// The raw `initial/market` payload, as served by the REST route.
    let payload: String
    /// Spot markets in payload order; `symbol` is the coinIndex key without `_1` (`BTC`),
    /// `name` the market_summary symbol (`BTC-USD`).
    let spot: [Market]

    static let embedded: MarketCatalog = {
        let payload = EmbeddedMarkets.json
        // The payload is generated and checked by scripts/embed-markets.py; failing here
        // means the generated file was edited by hand.
        let markets = try! BTSEMarketList.decode(Data(payload.utf8), source: "EmbeddedMarkets.swift")
        return MarketCatalog(payload: payload, spot: markets.filter { !$0.future })
    }()
}
