import AlertModel

/// The lists of price aggregators (CoinGecko, Coinranking): one coin per entry, named by
/// `symbol` (upper-cased), priced in one reference currency.
enum CoinList {
    /// One tick per entry with a `symbol` and a usable price; the rest are counted as skipped.
    /// A `change` that is null or not a number gives no change24h (it is already percent).
    static func ticks(
        _ entries: [FeedJSON], price: String, change: String,
        time: (FeedJSON) -> Int64
    ) -> ParsedFrame {
        var ticks: [Tick] = []
        var skipped = 0
        for entry in entries {
            guard let symbol = entry["symbol"]?.string, !symbol.isEmpty,
                let value = usablePrice(entry[price]?.number)
            else {
                skipped += 1
                continue
            }
            let change24h = entry[change]?.number.flatMap { $0.isFinite ? $0 : nil }
            ticks.append(Tick(time: time(entry), symbol: symbol.uppercased(), price: value, change24h: change24h))
        }
        return ParsedFrame(.ticks(ticks), skipped: skipped)
    }

    /// One market per entry with a `symbol`: base = the symbol, `quote` as given, spot, active
    /// (aggregators list coins, not tradable markets).
    static func markets(_ entries: [FeedJSON], quote: String) -> [Market] {
        entries.compactMap { entry in
            guard let symbol = entry["symbol"]?.string?.uppercased(), !symbol.isEmpty else { return nil }
            return Market(
                symbol: symbol, name: entry["name"]?.string ?? "", base: symbol,
                quote: quote.uppercased(), future: false, active: true)
        }
    }

    /// Upper-cased symbol → the aggregator's own coin id (`idKey`), for its history endpoint.
    /// Symbols are not unique there: the first entry of a symbol (the best ranked) wins, as
    /// its tick is the first of that symbol in a listing.
    static func ids(_ entries: [FeedJSON], idKey: String) -> [String: String] {
        var ids: [String: String] = [:]
        for entry in entries {
            guard let symbol = entry["symbol"]?.string?.uppercased(), !symbol.isEmpty,
                let id = entry[idKey]?.string, !id.isEmpty, ids[symbol] == nil
            else { continue }
            ids[symbol] = id
        }
        return ids
    }
}

extension FeedJSON {
    /// A body that must be a JSON array (market lists, summaries).
    static func parseArray(_ bytes: [UInt8], context: String) -> Result<[FeedJSON], FeedPayloadError> {
        parse(bytes, context: context).flatMap { json in
            guard let entries = json.array else {
                return .failure(FeedPayloadError("\(context): expected an array, found \(json.typeName)"))
            }
            return .success(entries)
        }
    }
}
