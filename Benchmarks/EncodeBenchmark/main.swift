// Alert encoding benchmark: alert events (Docs/rules.md#the-alert-event) per second, one core.
//   swift build -c release --product encode-benchmark
//   taskset -c 0 .build/release/encode-benchmark [events] [rounds]
// Alerts are made as the engine makes them (the rule's message template, the condition's
// text) from a seeded mix: price levels and crossings, bands, % changes with the change
// template, a custom message with non-ASCII text and characters JSON escapes, reminders and
// resolved events. Phases, each `rounds` times over `events` events (best and median of the
// wall-clock rate, median of the rate by the process's CPU time):
//   json      `AlertFormat.json` of each event, into memory
//   listing   the events' JSON lines written to a file in writes of about 64 KiB, as
//             `replay --format json > FILE` and `check --format json` list them
//   file-sink `FileSink.send` of each event (one `write(2)` an event)
//   dispatch  the events through a `Dispatcher` to a `FileSink`, 256 at a time, as `replay
//             --dispatch` and `check` hand alerts to a file sink (the sink writes each batch's
//             lines with a `write(2)` per about 64 KiB)
// A third argument picks phases (`json,listing`).
import AlertModel
import AlertSinks
import Glibc
import Platform
import SeededRandom

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let eventCount = arguments.first ?? 1_000_000
let rounds = arguments.dropFirst().first ?? 5
/// A third argument picks phases: `json,listing` (default: all).
let phases =
    CommandLine.arguments.count > 3
    ? CommandLine.arguments[3].split(separator: ",").map(String.init)
    : ["json", "listing", "file-sink", "dispatch"]

var rng = SeededRandom(seed: 1)
let symbols = (0..<227).map { "SYM\($0)" }

/// One alert as the engine makes it for a rule of the mix.
@MainActor func makeAlert(_ i: Int) -> Alert {
    let p = 10 * Double(rng.below(1_000_000)) / Double([1, 10, 100, 1_000, 100_000][rng.below(5)])
    let x = (p * rng.uniform(0.9...1.1) * 1e6).rounded() / 1e6
    let condition: Condition
    switch i % 8 {
    case 0: condition = .price(.above(x))
    case 1: condition = .price(.below(x.rounded()))
    case 2: condition = .price(.crossesAbove(x))
    case 3: condition = .price(.inside(x * 0.99, x))
    case 4, 5: condition = .change(window: [300_000, 3_600_000, 86_400_000][i % 3], .above(rng.uniform(1...9)))
    case 6: condition = .price(.crossesBelow(x))
    default: condition = .change(window: 3_600_000, .below(-rng.uniform(1...9)))
    }
    let value: Double = if case .change = condition { rng.uniform(-20...20) } else { p }
    let template =
        i % 16 == 7
        ? "Ünïcode ✓ \"{{symbol}}\"\t\\ {{ price }} ≥ {{threshold}} at {{time}}"
        : MessageTemplate.defaultTemplate(for: condition)
    let kind: AlertKind = i % 50 == 3 ? .resolved : .alert
    return Alert(
        rule: "rule-\(rng.below(100_000))", symbol: symbols[rng.below(symbols.count)],
        time: 1_700_000_000_000 + Int64(i) * 10, price: p, condition: condition.summary,
        threshold: condition.threshold, value: value, template: template, notify: ["journal"],
        kind: i % 20 == 9 ? .reminder : kind, reminder: i % 20 == 9 ? 1 + i % 5 : nil)
}

let alerts = (0..<eventCount).map(makeAlert)

/// The process's CPU time in seconds (user and system, all threads: a sink's `send` may run on
/// another thread): on a shared machine it tells what a phase costs when the wall clock also
/// counts other processes' turns.
func cpuSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

/// Runs `body` `rounds` times and prints events/s by the wall clock (best and median) and by
/// the process's CPU time (median), and bytes an event.
@MainActor func phase(_ name: String, _ body: () async -> Int) async {
    guard phases.contains(name) else { return }
    var rates: [Double] = [], cpuRates: [Double] = []
    var bytes = 0
    for _ in 0..<rounds {
        let start = Monotonic.seconds(), cpuStart = cpuSeconds()
        bytes = await body()
        rates.append(Double(eventCount) / (Monotonic.seconds() - start))
        cpuRates.append(Double(eventCount) / (cpuSeconds() - cpuStart))
    }
    rates.sort()
    cpuRates.sort()
    print(
        "\(name): wall best \(Int(rates.last!)) events/s, median \(Int(rates[rates.count / 2])) events/s; "
            + "CPU median \(Int(cpuRates[cpuRates.count / 2])) events/s (\(bytes / eventCount) bytes an event)")
}

/// Alerts handed to the dispatcher at once (`AlertListing.dispatchBatch` in `replay --dispatch`).
let dispatchBatch = 256

func temporaryFile(_ name: String) -> String {
    "/tmp/encode-benchmark-\(getpid())-\(name).jsonl"
}

print("\(eventCount) events, \(rounds) rounds")
await phase("json") {
    var total = 0
    for alert in alerts { total += AlertFormat.json(alert).utf8.count }
    return total
}
await phase("listing") {
    let path = temporaryFile("listing")
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    defer { close(fd); unlink(path) }
    let output = StandardOutput(fileDescriptor: fd)
    var batch: [UInt8] = []
    var total = 0
    for alert in alerts {
        StdoutSink.appendLine(for: alert, format: .json, to: &batch)
        batch.append(UInt8(ascii: "\n"))
        if batch.count >= 65_536 {
            total += batch.count
            output.write(lines: batch)
            batch.removeAll(keepingCapacity: true)
        }
    }
    total += batch.count
    output.write(lines: batch)
    return total
}
await phase("file-sink") {
    let path = temporaryFile("sink")
    defer { unlink(path) }
    let sink = try! FileSink(name: "journal", path: path)
    // Off the main actor, as the dispatcher's tasks call sinks: `send` then runs on the
    // caller's thread instead of hopping between two threads for every event.
    await Task.detached { [alerts] in
        for alert in alerts { _ = await sink.send(alert) }
    }.value
    var info = stat()
    stat(path, &info)
    return Int(info.st_size)
}
await phase("dispatch") {
    let path = temporaryFile("dispatch")
    defer { unlink(path) }
    let dispatcher = Dispatcher(sinks: ["journal": try! FileSink(name: "journal", path: path)])
    await Task.detached { [alerts] in
        var batch: [Alert] = []
        batch.reserveCapacity(dispatchBatch)
        for alert in alerts {
            batch.append(alert)
            if batch.count == dispatchBatch {
                await dispatcher.dispatch(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        await dispatcher.dispatch(batch)
    }.value
    var info = stat()
    stat(path, &info)
    return Int(info.st_size)
}
