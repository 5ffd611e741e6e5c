import AlertTestSupport
import Foundation
import Testing

/// Every folder under `Cases/` is one run of the built binary: `args` (one argument per line;
/// `{repo}` is the repository root), run inside the folder, and the expected standard output,
/// standard error and exit status. The expected files are written by hand from Docs/rules.md,
/// never copied from the output.
@Suite("end to end: cases", .programs)
struct CaseTests {
    static let casesFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Cases")

    static var names: [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: casesFolder.path).sorted()) ?? []
    }

    @Test(arguments: names)
    func runCase(_ name: String) async throws {
        let folder = Self.casesFolder.appendingPathComponent(name)
        func read(_ file: String) throws -> String {
            try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
        }
        let arguments = try read("args").split(separator: "\n").map {
            $0.replacingOccurrences(of: "{repo}", with: PriceAlertBinary.repo.path)
        }
        let result = try await PriceAlertBinary.run(arguments, in: folder)
        #expect(result.stdout == (try read("expected.stdout")))
        #expect(result.stderr == (try read("expected.stderr")))
        #expect(result.status == Int32(try read("expected.status").trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    @Test func everyCaseHasItsFiles() async throws {
        #expect(Self.names.count >= 6)
        for name in Self.names {
            for file in ["args", "expected.stdout", "expected.stderr", "expected.status"] {
                let path = Self.casesFolder.appendingPathComponent(name).appendingPathComponent(file).path
                #expect(FileManager.default.fileExists(atPath: path), "\(name) lacks \(file)")
            }
        }
    }
}
