import AlertModel

/// The sources users can name with `--source` and as a rule file source's `type`: one line
/// each in `make`.
public enum SourceRegistry {
    /// The one list of names, which rule files check `type` against too (`SourceDefinition`
    /// lives in the model, below the feeds); `make` knows each (SourceRegistryTests).
    public static let names = SourceDefinition.types

    /// The source called `name`, talking to `endpoint` (its REST base) or to its public default.
    public static func make(_ name: String, endpoint: String?) throws -> any PriceSource {
        switch name {
        case "binance": return ExchangeSource(.binance, endpoint: endpoint)
        case "coinbase": return ExchangeSource(.coinbase, endpoint: endpoint)
        case "kraken": return ExchangeSource(.kraken, endpoint: endpoint)
        case "bybit": return ExchangeSource(.bybit, endpoint: endpoint)
        case "okx": return ExchangeSource(.okx, endpoint: endpoint)
        case "btse": return BTSESource(endpoint: endpoint)
        case "poloniex": return PoloniexSource(endpoint: endpoint)
        case "poloniex-legacy": return PoloniexLegacySource(endpoint: endpoint)
        case "coingecko": return PolledSource.coinGecko(endpoint: endpoint)
        case "coinranking": return PolledSource.coinRanking(endpoint: endpoint)
        default:
            throw SourceError(
                url: "--source", reason: "unknown source '\(name)' (known: \(names.joined(separator: ", ")))")
        }
    }
}
