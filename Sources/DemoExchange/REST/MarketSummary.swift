import AlertModel
import Foundation

/// `GET /spot/api/v3.2/market_summary`: one entry per spot market in BTSE's field order
/// (checked against BTSE's published v3.2 example), with the simulated price and 24 h figures.
enum MarketSummary {
    /// The JSON array; `symbol` (`BTC-USD`, or the bare `BTC`) keeps one market, and an
    /// unknown symbol gives `[]`.
    static func json(markets: [Market], board: MarketBoard, symbol: String?) -> String {
        let wanted = symbol.map(Symbol.normalize)
        let entries = markets.compactMap { market -> String? in
            if let wanted, Symbol.normalize(market.name) != wanted, Symbol.normalize(market.symbol) != wanted {
                return nil
            }
            guard let entry = board.entries[market.symbol] else { return nil }
            return render(market, entry)
        }
        return "[" + entries.joined(separator: ",") + "]"
    }

    private static func render(_ market: Market, _ e: MarketBoard.Entry) -> String {
        let increment = priceIncrement(e.last)
        let spread = increment * 2
        let n = Frames.number, s = Frames.json
        return """
            {"symbol":\(s(market.name)),"last":\(n(e.last)),"lowestAsk":\(n(round(e.last + spread, to: increment))),\
            "highestBid":\(n(round(e.last - spread, to: increment))),"percentageChange":\(n(round(e.percentageChange, to: 1e-9))),\
            "volume":\(n(round(e.volume * e.last, to: 1e-6))),"high24Hr":\(n(round(e.high, to: increment))),\
            "low24Hr":\(n(round(e.low, to: increment))),"base":\(s(market.base)),"quote":\(s(market.quote)),\
            "active":\(market.active),"size":\(n(round(e.volume, to: 1e-5))),"minValidPrice":\(n(increment)),\
            "minPriceIncrement":\(n(increment)),"minOrderSize":\(n(sizeIncrement(e.last))),"maxOrderSize":2000,\
            "minSizeIncrement":\(n(sizeIncrement(e.last))),"openInterest":0,"openInterestUSD":0,"contractStart":0,\
            "contractEnd":0,"timeBasedContract":false,"openTime":0,"closeTime":0,"startMatching":0,"inactiveTime":0,\
            "fundingRate":0,"contractSize":0,"maxPosition":0,"minRiskLimit":0,"maxRiskLimit":0,\
            "availableSettlement":null,"futures":false,"isMarketOpenToOtc":false,"isMarketOpenToSpot":true}
            """
    }

    /// About five significant digits of tick: 0.5 → 1 at BTC prices, 1e-8 for tiny coins.
    static func priceIncrement(_ price: Double) -> Double {
        pow(10, floor(log10(max(price, 1e-12))) - 5)
    }

    static func sizeIncrement(_ price: Double) -> Double {
        min(1, pow(10, -floor(log10(max(price, 1e-12))) - 1))
    }

    /// `x` to a multiple of `step` (a power of ten), dividing by an exact power of ten so the
    /// result prints without binary noise (43000.2, not 43000.200000000004).
    static func round(_ x: Double, to step: Double) -> Double {
        let decimals = -Int(log10(step).rounded())
        guard decimals > 0 else { return (x / step).rounded() * step }
        let scale = pow(10, Double(decimals))
        return (x * scale).rounded() / scale
    }
}
