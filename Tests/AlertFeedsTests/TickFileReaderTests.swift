import AlertModel
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
    static let content =
        "\u{FEFF}{\"time\":1,\"symbol\":\"A\",\"price\":1}\r\n"
        + "\r\n"
        + "   \t\n"
        + "not json\n"
        + "{\"time\":2,\"symbol\":\"B\",\"price\":2}\n"
        + "\n"
        + "{\"time\":3,\"symbol\":\"C\",\"price\":3}\r" // no final newline

    @Test(arguments: [1 << 20, 16, 40]) // small chunks: lines straddle reads, the buffer grows
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

        let many = (0..<50_000).map { #"{"time":\#($0),"symbol":"S\#($0 % 7)","price":\#($0).25}"# }.joined(
            separator: "\n")
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
    /// A file read whole (a market list) stops at its limit: an endless one ends in an error.
    @Test func readingWholeStopsAtTheLimit() throws {
        #expect(InputFile.wholeFileLimit == 64 << 20)
        #expect {
            _ = try InputFile(path: "/dev/zero").readAll(limit: 1 << 20)
        } throws: { error in
            "\(error)" == "cannot read /dev/zero: larger than 1 MiB"
        }
        let path = try temporaryFile([UInt8](repeating: 0x20, count: 1 << 20))
        defer { unlink(path) }
        #expect(try InputFile(path: path).readAll(limit: 1 << 20).count == 1 << 20)
    }

    @Test func folderIsRefusedAtOpen() {
        #expect {
            _ = try TickFileReader(path: NSTemporaryDirectory())
        } throws: { error in
            "\(error)" == "cannot open \(NSTemporaryDirectory()): Is a directory"
        }
    }
}

/// Standard input is usually a pipe: reads return what the writer has written so far, often
/// much less than asked. Lines arriving in pieces of every size, one of them 5 MB long, are
/// read exactly as from a file.
@Suite struct TickFileReaderPipeTests {
    static let text: [UInt8] = {
        var text = ""
        for i in 0..<300 { text += "{\"time\":\(i),\"symbol\":\"S\(i)\",\"price\":\(i + 1)}\n" }
        text +=
            "{\"time\":1000,\"symbol\":\"LONG\",\"note\":\"" + String(repeating: "n", count: 5_000_000)
            + "\",\"price\":7}\r\n"
        text += "\nnot json\n{\"time\":1001,\"symbol\":\"END\",\"price\":8}"
        return Array(text.utf8)
    }()

    /// Writes `bytes` into a pipe from another thread in pieces of changing sizes and returns
    /// the path of the pipe's read end.
    static func pipe(_ bytes: [UInt8]) -> (path: String, pipe: Pipe) {
        let pipe = Pipe()
        let fd = pipe.fileHandleForWriting.fileDescriptor
        Thread {
            var offset = 0
            var size = 1
            while offset < bytes.count {
                let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, min(size, bytes.count - offset)) }
                guard n > 0 else { break }
                offset += n
                size = size * 7 % 100_003 + 1
            }
            try? pipe.fileHandleForWriting.close()
        }.start()
        return ("/dev/fd/\(pipe.fileHandleForReading.fileDescriptor)", pipe)
    }

    @Test(arguments: [1 << 20, 16])
    func linesFromAPipeAreReadAsFromAFile(chunkSize: Int) throws {
        let file = try temporaryFile(Self.text)
        defer { unlink(file) }
        let expected = try readAll(file)
        let (path, pipe) = Self.pipe(Self.text)
        let lines = try readAll(path, chunkSize: chunkSize)
        withExtendedLifetime(pipe) {}
        #expect(lines.map(\.0) == expected.map(\.0))
        #expect(lines.map(\.1) == expected.map(\.1))
        #expect(lines.count == 303)
        #expect(try lines[300].1.get() == Tick(time: 1000, symbol: "LONG", price: 7))
        #expect(try lines[302].1.get() == Tick(time: 1001, symbol: "END", price: 8))
    }
}
