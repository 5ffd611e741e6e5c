import AlertCore
import Foundation

func sampleAlert(_ rule: String = "btc-100k", time: Int64 = 1_700_000_000_000, notify: [String] = ["a"]) -> Alert {
    Alert(rule: rule, symbol: "BTC", time: time, price: 100012.5, condition: "price crossesAbove 100000",
          threshold: .value(100000), value: 100012.5, message: "BTC \"crossed\"\n100k", notify: notify)
}

/// A fresh empty folder under the temporary directory.
func temporaryFolder() throws -> String {
    let path = NSTemporaryDirectory() + "pricealert-sinks-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    return path
}
