import AlertCore
import Foundation
import Testing
@testable import AlertFeeds

/// Writes `content` to a fresh temporary file and returns its path.
func temporaryFile(_ content: [UInt8]) throws -> String {
    let path = NSTemporaryDirectory() + "pricealert-\(UUID().uuidString).jsonl"
    try Data(content).write(to: URL(fileURLWithPath: path))
    return path
}

private func readAll(_ path: String, chunkSize: Int = 1 << 20) throws -> [(Int, Result<Tick, TickLineError>)] {
    var reader = try TickFileReader(path: path)
    reader.chunkSize = chunkSize
    var lines: [(Int, Result<Tick, TickLineError>)] = []
    try reader.forEachLine { lines.append(($0, $1)) }
    return lines
}

@Suite struct TickFileReaderTests {
    static let content = "\u{FEFF}{\"time\":1,\"symbol\":\"A\",\"price\":1}\r\n"
        + "\r\n"
        + "   \t\n"
        + "not json\n"
        + "{\"time\":2,\"symbol\":\"B\",\"price\":2}\n"
        + "\n"
        + "{\"time\":3,\"symbol\":\"C\",\"price\":3}\r"  // no final newline

    @Test(arguments: [1 << 20, 16, 40])  // small chunks: lines straddle reads, the buffer grows
    func linesNumbersCRLFBlankAndBadLines(chunkSize: Int) throws {
        let path = try temporaryFile(Array(Self.content.utf8))
        defer { unlink(path) }
        let lines = try readAll(path, chunkSize: chunkSize)
        #expect(lines.map(\.0) == [1, 4, 5, 7])
        #expect(try lines[0].1.get() == Tick(time: 1, symbol: "A", price: 1))
        #expect(throws: TickLineError.self) { try lines[1].1.get() }
        #expect(try lines[2].1.get() == Tick(time: 2, symbol: "B", price: 2))
        #expect(try lines[3].1.get() == Tick(time: 3, symbol: "C", price: 3))
    }

    @Test func emptyFileAndManyLines() throws {
        let empty = try temporaryFile([])
        defer { unlink(empty) }
        #expect(try readAll(empty).isEmpty)

        let many = (0..<50_000).map { #"{"time":\#($0),"symbol":"S\#($0 % 7)","price":\#($0).25}"# }.joined(separator: "\n")
        let path = try temporaryFile(Array(many.utf8))
        defer { unlink(path) }
        let lines = try readAll(path, chunkSize: 4096)
        #expect(lines.count == 50_000)
        #expect(lines.enumerated().allSatisfy { i, line in line.0 == i + 1 && (try? line.1.get().time) == Int64(i) })
    }

    @Test func missingFileNamesPathAndReason() {
        #expect {
            _ = try TickFileReader(path: "no-such-dir/ticks.jsonl")
        } throws: { error in
            "\(error)" == "cannot open no-such-dir/ticks.jsonl: No such file or directory"
        }
    }

    @Test func errorsFromTheBodyStopReading() throws {
        struct Stop: Error {}
        let path = try temporaryFile(Array(Self.content.utf8))
        defer { unlink(path) }
        var seen = 0
        #expect(throws: Stop.self) {
            try TickFileReader(path: path).forEachLine { _, _ in
                seen += 1
                throw Stop()
            }
        }
        #expect(seen == 1)
    }
}

@Suite struct InputFileErrors {
    @Test func folderIsRefusedAtOpen() {
        #expect {
            _ = try TickFileReader(path: NSTemporaryDirectory())
        } throws: { error in
            "\(error)" == "cannot open \(NSTemporaryDirectory()): Is a directory"
        }
    }
}
