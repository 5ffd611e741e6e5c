import AlertTestSupport
import Foundation
import ParserFuzzing
import Testing

/// A short run of `pricealert-fuzz` in the test suite: every parser on a few thousand seeded
/// hostile inputs, in process, one parser at a time. A crash fails the run; an input still
/// running after the watchdog's generous budget (a hang, not a slow machine) stops it with the
/// line that reproduces it.
/// Serialized: each parser's run checks the growth of the whole process's resident memory.
@Suite("fuzz: a few thousand inputs per parser", .serialized, .computation)
struct FuzzSmokeTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    static let fixtures = repository + "/Tests/Fixtures"

    /// Resident memory of this process, KiB.
    static func residentKiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }

    @Test(arguments: FuzzTarget.all.map(\.name))
    func parserSurvivesSeededHostileInputs(name: String) throws {
        let target = try #require(FuzzTarget.named(name))
        let campaign = try FuzzCampaign(target: target, seed: 16, repository: Self.repository, fixtures: Self.fixtures)
        #expect(!campaign.seeds.isEmpty)
        let watchdog = Watchdog(budget: .seconds(120)) { index, seconds in
            fatalError(
                "\(name): input \(index) still running after \(Int(seconds)) s: pricealert-fuzz --parser \(name) --seed 16 --from \(index) --inputs 1"
            )
        }
        defer { watchdog.stop() }
        let before = Self.residentKiB()
        let outcome = campaign.run(from: 0, count: 1_000, watchdog: watchdog)
        #expect(outcome.inputs == 1_000)
        #expect(outcome.largestInputBytes > 64 << 10, "no huge input among them")
        #expect(Self.residentKiB() - before < 512 << 10, "resident memory grew past 512 MiB")
    }

    @Test func inputsAreReproducibleFromSeedAndIndex() throws {
        let target = try #require(FuzzTarget.named("tick-line"))
        let one = try FuzzCampaign(target: target, seed: 5, repository: Self.repository, fixtures: Self.fixtures)
        let two = try FuzzCampaign(target: target, seed: 5, repository: Self.repository, fixtures: Self.fixtures)
        let other = try FuzzCampaign(target: target, seed: 6, repository: Self.repository, fixtures: Self.fixtures)
        #expect((0..<50).allSatisfy { one.input($0) == two.input($0) })
        #expect((0..<50).contains { one.input($0) != other.input($0) })
    }
}
