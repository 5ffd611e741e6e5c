import Foundation
import Logging
import Testing

@testable import Operations

#if canImport(Glibc)
import Glibc
#endif

@Suite("journal log lines")
struct JournalLogHandlerTests {
    @Test func linesStartWithTheSyslogPriorityAndCarrySortedMetadata() {
        #expect(
            JournalLogHandler.line(
                level: .warning, label: "pricealert", message: "btse: closed\nagain",
                metadata: ["sink": "ops", "alert": "a1"])
                == "<4>pricealert: btse: closed again alert=a1 sink=ops")
        #expect(Logger.Level.allCases.map(JournalLogHandler.priority) == [7, 7, 6, 5, 4, 3, 2])
    }

    @Test func standardErrorIsTheJournalOnlyWhenJournalStreamNamesItsFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pricealert-journal-\(UUID().uuidString)"
        ).path
        let fd = open(path, O_CREAT | O_RDWR, 0o600)
        #expect(fd >= 0)
        defer { close(fd); unlink(path) }
        var info = stat()
        #expect(fstat(fd, &info) == 0)
        #expect(JournalLogHandler.isJournal(descriptor: fd, journalStream: "\(info.st_dev):\(info.st_ino)"))
        #expect(!JournalLogHandler.isJournal(descriptor: fd, journalStream: "\(info.st_dev):\(info.st_ino + 1)"))
        #expect(!JournalLogHandler.isJournal(descriptor: fd, journalStream: nil))
        #expect(!JournalLogHandler.isJournal(descriptor: fd, journalStream: "garbage"))
    }
}
