import AlertTestSupport
import Foundation
import Testing

/// The test support's `ObservedProcess`, which every end-to-end test waits on.
@Suite("test support: the end of a program", .programs)
struct ObservedProcessTests {
    /// A program has ended when it exits, even while another process holds its output open (a
    /// child started beside it inherits the pipe, as a test's PostgreSQL server or another
    /// test's program can): what it wrote is all read, and the wait does not last as long as
    /// the other process.
    @Test func aProgramEndsWhenItExitsThoughAnotherProcessHoldsItsOutput() async throws {
        let result = try await ObservedProcess.run(
            URL(fileURLWithPath: "/bin/sh"), ["-c", "sleep 600 & echo $!; echo written >&2; exit 3"], timeout: 60)
        if let holder = Int32(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) { kill(holder, SIGKILL) }
        #expect(result.status == 3)
        #expect(result.stderr == "written\n")
    }

    /// A program ended by a signal says so, with the signal's number as its status.
    @Test func aProgramKilledBySignalSaysSo() async throws {
        let running = try ObservedProcess(URL(fileURLWithPath: "/bin/sh"), ["-c", "echo up; exec sleep 600"])
        _ = try await running.line(.stdout, containing: "up", timeout: 60)
        #expect(running.endedBySignal == nil)
        kill(running.pid, SIGKILL)
        let result = try await running.wait(timeout: 60)
        #expect(running.endedBySignal == true)
        #expect(result.status == SIGKILL)
    }
}
