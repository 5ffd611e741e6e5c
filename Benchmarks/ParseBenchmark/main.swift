// Parse benchmark: how fast recorded ticks are read and parsed, without the engine; with
// `frames`, the five exchanges' ticker frame parsers (FrameBenchmark.swift).
// Run: swift run -c release parse-benchmark [lines]
//      swift run -c release parse-benchmark frames [rounds] [markets]
import AlertFeeds
import AlertModel
import Foundation

if CommandLine.arguments.dropFirst().first == "frames" {
    let numbers = CommandLine.arguments.dropFirst(2).compactMap { Int($0) }
    FrameBenchmark.run(rounds: numbers.first ?? 9, markets: numbers.dropFirst().first ?? 600)
    exit(0)
}

let lineCount = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 2_000_000
let symbols = ["BTC", "ETH", "SOL", "XRP", "DOGE", "ADA", "AVAX", "LINK"]

/// Realistic lines: epoch-ms times, 2–8 decimals, a change24h on most lines.
func makeLines() -> [UInt8] {
    var text = ""
    text.reserveCapacity(lineCount * 80)
    var price = 43000.5
    for i in 0..<lineCount {
        price *= 1 + Double((i * 7919) % 201 - 100) / 1_000_000
        let symbol = symbols[i % symbols.count]
        let rounded = (price * 100).rounded() / 100
        if i % 4 == 3 {
            text += #"{"time": \#(1_700_000_000_000 + i * 250), "symbol": "\#(symbol)", "price": \#(rounded)}"# + "\n"
        } else {
            text +=
                #"{"time": \#(1_700_000_000_000 + i * 250), "symbol": "\#(symbol)", "price": \#(rounded), "change24h": \#(Double(i % 1000) / 100 - 5)}"#
                + "\n"
        }
    }
    return Array(text.utf8)
}

/// Best of three runs (the machine is shared; the best run is the least disturbed).
func measure(_ label: String, bytes: Int, _ body: () throws -> Int) rethrows {
    let clock = ContinuousClock()
    var checksum = 0
    var seconds = Double.infinity
    for _ in 0..<3 {
        let elapsed = try clock.measure { checksum = try body() }
        seconds = min(seconds, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
    let rate = Double(lineCount) / seconds
    print(
        "\(label): \(lineCount) lines in \(String(format: "%.3f", seconds)) s = "
            + "\(String(format: "%.2f", rate / 1e6)) M lines/s, \(String(format: "%.0f", Double(bytes) / seconds / 1e6)) MB/s (checksum \(checksum))"
    )
}

let bytes = makeLines()

measure("TickLineParser (in memory)", bytes: bytes.count) {
    var valid = 0
    bytes.withUnsafeBufferPointer { all in
        var start = 0
        while start < all.count, let newline = memchr(all.baseAddress! + start, 0x0A, all.count - start) {
            let end = UnsafePointer<UInt8>(newline.assumingMemoryBound(to: UInt8.self)) - all.baseAddress!
            if case .success(let tick) = TickLineParser.parse(UnsafeBufferPointer(rebasing: all[start..<end])) {
                valid &+= tick.symbol.utf8.count &+ Int(tick.price)
            }
            start = end + 1
        }
    }
    return valid
}

let path = NSTemporaryDirectory() + "replay-benchmark-\(getpid()).jsonl"
try Data(bytes).write(to: URL(fileURLWithPath: path))
defer { unlink(path) }

try measure("TickFileReader (file)", bytes: bytes.count) {
    var valid = 0
    try TickFileReader(path: path).forEachLine { _, result in
        if case .success(let tick) = result { valid &+= tick.symbol.utf8.count &+ Int(tick.price) }
    }
    return valid
}
