import AlertModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a recorded tick file (JSON Lines, Docs/rules.md#ticks) — a path, or `-` for standard input.
///
/// Reads 1 MiB chunks and parses each line in place (no per-line syscalls or copies, except a
/// line that straddles two chunks, which is moved to the front of the buffer). Lines end with
/// `\n`; a trailing `\r` is stripped; a UTF-8 byte-order mark at the start is ignored; lines
/// that are empty or only whitespace are skipped silently (they still count for line numbers);
/// the last line need not end with `\n`.
///
/// Opening happens in `init`, so a missing file is reported before any work starts.
public struct TickFileReader: ~Copyable {
    private let file: InputFile
    /// Bytes read per `read(2)` (at least 16); a longer line makes the buffer grow.
    public var chunkSize = 1 << 20

    public init(path: String) throws(InputFileError) {
        file = try InputFile(path: path)
    }

    /// Calls `body` with the 1-based line number and the parse result of each non-blank line,
    /// in file order, and `afterRead` once the whole lines of each `read(2)` have been given
    /// (so a caller that batches lines can pass on those of a pipe that is still being written
    /// without waiting for more). Errors thrown by either stop the reading and are rethrown.
    public func forEachLine(
        _ body: (Int, Result<Tick, TickLineError>) throws -> Void,
        afterRead: () throws -> Void = {}
    ) throws {
        var buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(chunkSize, 16), alignment: 16)
        defer { buffer.deallocate() }
        var filled = 0 // bytes in buffer[0..<filled] not yet consumed
        // buffer[0..<scanned] holds no newline: a long line arriving in short reads (a pipe
        // gives at most 64 KiB each) is searched once, not again from its start at every read.
        var scanned = 0
        var lineNumber = 0
        var atStart = true
        var endOfFile = false

        while !endOfFile {
            if filled == buffer.count { // one line is longer than the buffer
                let bigger = UnsafeMutableRawBufferPointer.allocate(byteCount: buffer.count * 2, alignment: 16)
                bigger.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[0..<filled]))
                buffer.deallocate()
                buffer = bigger
            }
            let n = try file.readChunk(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
            endOfFile = n == 0
            filled += n
            let bytes = UnsafeBufferPointer(
                start: buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), count: filled)
            var lineStart = 0
            if atStart {
                if filled < 3 && !endOfFile { continue } // need three bytes to see a byte-order mark
                atStart = false
                if filled >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { lineStart = 3 }
            }
            while lineStart < filled {
                let from = max(lineStart, scanned)
                let rest = UnsafeRawPointer(bytes.baseAddress! + from)
                var lineEnd: Int
                if let newline = memchr(rest, 0x0A, filled - from) {
                    lineEnd = from + (UnsafeRawPointer(newline) - rest)
                } else if endOfFile {
                    lineEnd = filled
                } else {
                    scanned = filled
                    break
                }
                let next = lineEnd + 1
                lineNumber += 1
                if lineEnd > lineStart, bytes[lineEnd - 1] == 0x0D { lineEnd -= 1 }
                let line = UnsafeBufferPointer(rebasing: bytes[lineStart..<lineEnd])
                if !Self.isBlank(line) { try body(lineNumber, TickLineParser.parse(line)) }
                lineStart = next
            }
            try afterRead()
            scanned = max(scanned - lineStart, 0)
            if lineStart >= filled {
                filled = 0
            } else if lineStart > 0 {
                let remaining = filled - lineStart
                buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + lineStart, byteCount: remaining)
                filled = remaining
            }
        }
    }

    private static func isBlank(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        for c in line where c != 0x20 && c != 0x09 && c != 0x0D { return false }
        return true
    }
}
