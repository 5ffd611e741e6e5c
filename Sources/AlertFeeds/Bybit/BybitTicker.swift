/// Bybit v5 public spot websocket (`wss://stream.bybit.com/v5/public/spot`), topic
/// `tickers.<SYMBOL>`. Docs: https://bybit-exchange.github.io/docs/v5/websocket/public/ticker,
/// https://bybit-exchange.github.io/docs/v5/ws/connect
///
/// Tick (rules v3 §2): symbol `data.symbol` (`BTCUSDT`, mapped to `BASE/QUOTE` by
/// `BybitMarkets`), time the message's `ts`, price `lastPrice`, change24h `price24hPcnt` × 100
/// (a fraction), volume24h `turnover24h` (quote). Spot sends only snapshots; a `delta` frame
/// (linear/inverse: missing field = unchanged) is dropped, as it cannot be read on its own.
/// Control: `{"op":"subscribe","success":…,"ret_msg":…}`, pongs (`{"op":"ping","ret_msg":"pong",…}`
/// on spot, `{"op":"pong",…}` elsewhere).
public enum BybitTicker {
    /// "For spot, you can input up to 10 args for each subscription request sent to one
    /// connection" (docs: ws/connect).
    public static let argsPerMessage = 10
    /// Sent every 20 s, as the docs recommend, to keep the connection alive.
    public static let pingMessage = #"{"op":"ping"}"#

    public static func subscribeMessages(symbols: [String]) -> [String] {
        symbols.batched(argsPerMessage).map { batch in
            #"{"op":"subscribe","args":[\#(batch.map { jsonString("tickers.\($0)") }.joined(separator: ","))]}"#
        }
    }

    public static func parse(_ frame: [UInt8]) -> ExchangeFrame {
        let context = "Bybit frame"
        switch ExchangeJSON.parse(frame, context) {
        case .failure(let failure): return .dropped(failure.reason)
        case .success(let json):
            guard json.members != nil else { return .dropped("\(context): expected an object, found \(json.typeName)") }
            if let op = json["op"]?.string {
                let message = json["ret_msg"]?.string
                switch op {
                case "pong": return .control(.pong)
                case "ping" where message == "pong": return .control(.pong)
                default:
                    if json["success"]?.bool == false {
                        return .control(.error(ExchangeJSON.text(message ?? "\(op) failed")))
                    }
                    if op == "subscribe" {
                        return .control(.subscribed(ExchangeJSON.text(json["req_id"]?.string ?? op)))
                    }
                    return .dropped("\(context): op \"\(ExchangeJSON.text(op))\" not expected")
                }
            }
            guard let topic = json["topic"]?.string else { return .dropped(#"\#(context): no "topic" and no "op""#) }
            guard topic.hasPrefix("tickers.") else {
                return .dropped("\(context): topic \"\(ExchangeJSON.text(topic))\" is not tickers")
            }
            if let type = json["type"]?.string, type != "snapshot" {
                return .dropped("\(context): type \"\(ExchangeJSON.text(type))\" is not a spot snapshot")
            }
            guard let data = json["data"], data.members != nil else {
                return .dropped(#"\#(context): "data" is not an object"#)
            }
            var collector = TickCollector(context)
            collector.add(
                symbol: data["symbol"], time: json["ts"]?.integer, price: ExchangeJSON.figure(data["lastPrice"]),
                change24h: ExchangeJSON.figure(data["price24hPcnt"]).map { $0 * 100 },
                volume24h: ExchangeJSON.figure(data["turnover24h"]))
            return collector.frame
        }
    }
}
