import AlertModel

/// The text frames the exchange sends, written by hand so key order (and so every byte) is
/// fixed: the same seed gives byte-identical frames, which tests compare.
enum Frames {
    static let connected = "connect success"
    static let pong = "pong"

    /// `{"topic":"coinIndex","id":null,"data":{"BTC_1":{"id":"BTC","name":"BTC","type":1,"price":43210.5},…}}`
    static func coinIndex(_ prices: [(symbol: String, price: Double)]) -> String {
        var text = #"{"topic":"coinIndex","id":null,"data":{"#
        for (i, (symbol, price)) in prices.enumerated() {
            let name = json(symbol)
            if i > 0 { text += "," }
            text += #"\#(json(symbol + "_1")):{"id":\#(name),"name":\#(name),"type":1,"price":\#(number(price))}"#
        }
        return text + "}}"
    }

    /// The `n`th invalid frame (1-based): odd ones are not JSON (the coinIndex example from a
    /// public README, which lacks a quote), even ones are JSON of the wrong shape.
    static func invalid(_ n: Int) -> String {
        if n % 2 == 1 {
            return
                #"{"topic":"coinIndex","id":null,"data":{"ANT_1":{"id":"ANT","name":"ANT","type: 1,"price":3.273782}}}"#
        }
        return #"{"topic":"coinIndex","id":null,"data":[{"symbol":"ANT","price":"not a number"}]}"#
    }

    static func ack(_ event: String, channels: [String]) -> String {
        #"{"event":\#(json(event)),"channel":[\#(channels.map(json).joined(separator: ","))]}"#
    }

    static func error(_ message: String) -> String {
        #"{"event":"error","message":\#(json(message))}"#
    }

    /// A JSON string literal.
    static func json(_ s: String) -> String {
        JSONString.quote(s)
    }

    /// A JSON number; Swift's shortest round-trip spelling is valid JSON for finite values.
    static func number(_ x: Double) -> String {
        x.isFinite ? "\(x)" : "0"
    }
}
