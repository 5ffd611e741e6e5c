// rule-load FILE [ROUNDS]: reads and checks FILE's rules ROUNDS times (default 5) as every
// command loads them (`RuleLoader.load`, no rules cache), and prints the best and median
// milliseconds of a round. Built outside the package by Benchmarks/RuleLoad/build.sh, so two
// versions of the code can be compared side by side.
import AlertModel
import AlertRules
import Glibc

let arguments = CommandLine.arguments
guard arguments.count >= 2, let file = fopen(arguments[1], "rb") else {
    print("usage: rule-load FILE [ROUNDS]")
    exit(2)
}
let rounds = arguments.count > 2 ? max(1, Int(arguments[2]) ?? 5) : 5
var bytes: [UInt8] = []
var chunk = [UInt8](repeating: 0, count: 1 << 16)
while true {
    let n = fread(&chunk, 1, chunk.count, file)
    if n <= 0 { break }
    bytes += chunk[0..<n]
}
fclose(file)

var millis: [Double] = []
var count = 0
for _ in 0..<rounds {
    let clock = ContinuousClock()
    let start = clock.now
    switch RuleLoader.load([RuleSource(path: arguments[1], bytes: bytes)], sinkTypes: []) {
    case .success(let set): count = set.rules.count
    case .failure(let errors):
        print(errors)
        exit(1)
    }
    let elapsed = start.duration(to: clock.now).components
    millis.append(Double(elapsed.seconds) * 1e3 + Double(elapsed.attoseconds) / 1e15)
}
millis.sort()
print("rules=\(count) best_ms=\(millis[0]) median_ms=\(millis[millis.count / 2])")
