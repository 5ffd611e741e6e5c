import AlertModel

/// A source's market list saved from its REST API, read from a file: what `replay` and
/// `check --ticks` take as `--markets NAME=FILE` for a rule-file source (rules v3 §3), in that
/// exchange's own format (`exchangeInfo` for Binance, `products` for Coinbase, `AssetPairs` for
/// Kraken, `instruments-info` for Bybit, `instruments` for OKX, `initial/market` for BTSE, …).
/// Entries are the markets the source's ticks join to: for the five exchanges, `BASE/QUOTE` in
/// the common asset codes.
public enum MarketListFile {
    /// The source types whose market list can be read from a file.
    public static let types = [
        "binance", "coinbase", "kraken", "bybit", "okx", "btse", "poloniex", "coingecko", "coinranking"
    ]

    /// Reads and parses `path` (`-` reads standard input) as the market list of a source of
    /// `type`. The error names the file and says why: it cannot be read, the type has no such
    /// list, or the content is not that exchange's list.
    public static func load(path: String, type: String) throws(BTSEMarketListError) -> [Market] {
        let bytes: [UInt8]
        do {
            bytes = try InputFile(path: path).readAll()
        } catch {
            throw BTSEMarketListError(source: path, reason: error.reason, action: error.action)
        }
        let parsed: Result<[Market], FeedPayloadError>
        func spot(_ result: Result<[ExchangeMarket], FeedPayloadError>) -> Result<[Market], FeedPayloadError> {
            result.map { list in
                list.map {
                    Market(
                        symbol: $0.symbol, name: $0.exchangeSymbol, base: $0.base, quote: $0.quote, future: false,
                        active: $0.active)
                }
            }
        }
        switch type {
        case "binance": parsed = spot(BinanceMarkets.parse(bytes))
        case "coinbase": parsed = spot(CoinbaseMarkets.parse(bytes))
        case "kraken": parsed = spot(KrakenMarkets.parse(bytes))
        case "bybit": parsed = spot(BybitMarkets.parse(bytes))
        case "okx": parsed = spot(OKXMarkets.parse(bytes))
        case "poloniex": parsed = PoloniexMarkets.parse(bytes)
        case "coingecko": parsed = CoinGeckoMarkets.markets(bytes)
        case "coinranking": parsed = CoinRankingCoins.markets(bytes)
        case "btse":
            do {
                return try BTSEMarketList.decode(bytes, source: path)
            } catch let error as BTSEMarketListError {
                throw error
            } catch {
                throw BTSEMarketListError(source: path, reason: "\(error)")
            }
        default:
            throw BTSEMarketListError(
                source: path,
                reason:
                    "a source of type \(type) has no market list file (types that have: \(types.joined(separator: ", ")))"
            )
        }
        switch parsed {
        case .success(let markets): return markets
        case .failure(let error): throw BTSEMarketListError(source: path, reason: error.reason)
        }
    }
}
