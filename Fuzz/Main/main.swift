// `pricealert-fuzz`: every parser that reads outside bytes, on a million seeded hostile inputs
// each (Docs/fuzzing.md). Each parser runs in a child process of its own, so a crash (which
// kills the process) is reported with the input that reproduces it, and each parser's peak
// memory is its own.
import Foundation
import ParserFuzzing
import Synchronization

struct Options {
    var inputs = 1_000_000
    var seed: UInt64 = 1
    var from = 0
    var parsers: [String] = []
    var repository = FileManager.default.currentDirectoryPath
    var fixtures: String?
    var budgetMilliseconds = 2_000
    var child = false
    var writeInput: String?

    static let usage = """
        usage: pricealert-fuzz [--inputs N] [--seed S] [--parser NAME]... [--from I]
                               [--repo PATH] [--fixtures PATH] [--budget-ms MS] [--write-input FILE]
          --inputs N        inputs per parser (1000000)
          --seed S          the seed every input derives from (1)
          --parser NAME     only this parser (repeatable): \(FuzzTarget.all.map(\.name).joined(separator: ", "))
          --from I          start at input I (with --inputs 1: reproduce one input)
          --repo PATH       the repository, for Rules/ and Samples/ (the current directory)
          --fixtures PATH   the recorded payloads (REPO/Tests/Fixtures)
          --budget-ms MS    an input running longer is a hang (2000)
          --write-input F   write input --from of the one --parser to F and stop
        """

    init(_ arguments: [String]) {
        var i = 1
        func value() -> String {
            i += 1
            guard i < arguments.count else { fail("\(arguments[i - 1]) needs a value") }
            return arguments[i]
        }
        while i < arguments.count {
            switch arguments[i] {
            case "--inputs": inputs = Int(value()) ?? inputs
            case "--seed": seed = UInt64(value()) ?? seed
            case "--from": from = Int(value()) ?? from
            case "--parser": parsers.append(value())
            case "--repo": repository = value()
            case "--fixtures": fixtures = value()
            case "--budget-ms": budgetMilliseconds = Int(value()) ?? budgetMilliseconds
            case "--write-input": writeInput = value()
            case "--child": child = true
            case "-h", "--help": print(Self.usage); exit(0)
            default: fail("unknown option \(arguments[i])\n\(Self.usage)")
            }
            i += 1
        }
        for name in parsers where FuzzTarget.named(name) == nil { fail("no parser named \(name)") }
    }

    var fixturesPath: String { fixtures ?? repository + "/Tests/Fixtures" }

    func reproduce(_ parser: String, from: Int, inputs: Int) -> String {
        "pricealert-fuzz --parser \(parser) --seed \(seed) --from \(from) --inputs \(inputs)"
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("pricealert-fuzz: \(message)\n".utf8))
    exit(64)
}

let options = Options(CommandLine.arguments)

if let path = options.writeInput {
    guard options.parsers.count == 1, let target = FuzzTarget.named(options.parsers[0]) else {
        fail("--write-input needs one --parser")
    }
    let campaign = try FuzzCampaign(
        target: target, seed: options.seed, repository: options.repository, fixtures: options.fixturesPath)
    _ = FileManager.default.createFile(atPath: path, contents: Data(campaign.input(options.from)))
    exit(0)
}

if options.child {
    guard let target = FuzzTarget.named(options.parsers.first ?? "") else { fail("--child needs --parser") }
    ChildRun.run(target, options)
}
ParentRun.run(options)
