import AlertModel
import AlertTestSupport
import Foundation
import Platform
import Testing

@testable import AlertSinks

@Suite struct StdoutSinkTests {
    @Test func lineFormats() {
        let alert = sampleAlert()
        #expect(StdoutSink.line(for: alert, format: .text) == AlertFormat.text(alert))
        #expect(StdoutSink.line(for: alert, format: .json) == AlertFormat.json(alert))
        #expect(!AlertFormat.json(alert).contains("\n"))
    }

    /// Writes through a pipe and reads back exactly the lines, one per alert.
    @Test func writesWholeLinesToTheOutput() async throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let output = StandardOutput(fileDescriptor: fds[1])
        let sink = StdoutSink(name: "console", format: .json, output: output)
        let alerts = (1...3).map { sampleAlert(time: Int64($0)) }
        for alert in alerts { #expect(await sink.send(alert) == .delivered) }
        output.writeLine("listing line")
        close(fds[1])
        let text = String(decoding: FileHandle(fileDescriptor: fds[0]).readDataToEndOfFile(), as: UTF8.self)
        #expect(text == alerts.map { AlertFormat.json($0) + "\n" }.joined() + "listing line\n")
    }

    @Test func concurrentWritersNeverInterleave() async throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let output = StandardOutput(fileDescriptor: fds[1])
        let line = String(repeating: "x", count: 10_000)
        let readEnd = fds[0]
        // Reads on a thread of its own: the writers below block while the pipe is full.
        let reader = OwnThread { FileHandle(fileDescriptor: readEnd).readDataToEndOfFile() }
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<8 {
                group.addTask { for _ in 0..<20 { output.writeLine("\(i)" + line) } }
            }
        }
        close(fds[1])
        let text = String(decoding: await reader.value, as: UTF8.self)
        close(fds[0])
        let lines = text.split(separator: "\n")
        #expect(lines.count == 160)
        #expect(lines.allSatisfy { $0.count == 10_001 && $0.dropFirst().allSatisfy { $0 == "x" } })
    }

    @Test func closedPipeIsAPermanentFailure() async {
        ProcessSetUp.atStart()
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        close(fds[0])
        defer { close(fds[1]) }
        let sink = StdoutSink(name: "console", format: .text, output: StandardOutput(fileDescriptor: fds[1]))
        let result = await sink.send(sampleAlert())
        #expect(result == .permanent(reason: "standard output is closed (Broken pipe)"))
    }
}
