import AlertModel
import Foundation
import Synchronization

/// The market `ExchangeConfiguration.newMarketAfter` lists: a spot market added to the list
/// after it has been served N times, priced at a fixed `price` by `market_summary` from then on.
enum NewMarket {
    static let market = Market(
        symbol: "NEWCOIN", name: "NEWCOIN-USD", base: "NEWCOIN", quote: "USD", future: false, active: true)
    static let price = 1.2345

    /// `payload` (the `initial/market` object) with the new market first in `data`.
    static func payload(adding payload: String) -> String {
        let entry =
            #"{"marketName":"NEWCOIN-USD","active":true,"future":false,"symbol":"NEWCOIN","quoteCurrency":"USD","baseCurrency":"NEWCOIN"},"#
        guard let data = payload.range(of: #""data":["#) else { return payload }
        return String(payload[..<data.upperBound]) + entry + String(payload[data.upperBound...])
    }

    /// Counts the market lists served and says when the new market is on them.
    final class Listing: Sendable {
        private let after: Int?
        private let served = Mutex(0)

        init(after: Int?) {
            self.after = after
        }

        /// Counts one list served; true when it lists the new market.
        func serveList() -> Bool {
            let count = served.withLock { count in
                count += 1
                return count
            }
            return after.map { count > $0 } ?? false
        }

        /// The new market has been on a list served.
        var isListed: Bool {
            guard let after else { return false }
            return served.withLock { $0 } > after
        }
    }
}
