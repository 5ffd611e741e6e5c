/// The sources users can name with `--source`: one line each.
public enum SourceRegistry {
    public static let names = ["btse", "poloniex", "poloniex-legacy", "coingecko", "coinranking"]

    /// The source called `name`, talking to `endpoint` (its REST base) or to its public default.
    public static func make(_ name: String, endpoint: String?) throws -> any PriceSource {
        switch name {
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
