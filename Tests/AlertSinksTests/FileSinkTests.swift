import AlertModel
import Foundation
import Testing

@testable import AlertSinks

@Suite struct FileSinkTests {
    @Test func createsPrivateFileAndAppendsAcrossRuns() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/alerts.jsonl"
        let first = [sampleAlert(time: 1), sampleAlert(time: 2)]
        let second = [sampleAlert("eth", time: 3)]

        do {
            let sink = try FileSink(name: "journal", path: path)
            for alert in first { #expect(await sink.send(alert) == .delivered) }
        }
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)

        let sink = try FileSink(name: "journal", path: path)
        for alert in second { #expect(await sink.send(alert) == .delivered) }
        let content = try String(contentsOfFile: path, encoding: .utf8)
        #expect(content == (first + second).map { AlertFormat.json($0) + "\n" }.joined())
    }

    @Test func missingFolderIsNamed() {
        #expect {
            _ = try FileSink(name: "journal", path: "alerts-missing-for-test/x.jsonl")
        } throws: { error in
            "\(error)"
                == "file sink 'journal': cannot open alerts-missing-for-test/x.jsonl: folder 'alerts-missing-for-test' does not exist"
        }
    }

    /// A regular file used as a folder gives ENOTDIR even as root, where permission bits are
    /// not enforced.
    @Test func fileUsedAsFolder() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let plain = folder + "/plain"
        #expect(FileManager.default.createFile(atPath: plain, contents: Data()))
        #expect {
            _ = try FileSink(name: "journal", path: plain + "/x.jsonl")
        } throws: { error in
            "\(error)" == "file sink 'journal': cannot open \(plain)/x.jsonl: Not a directory"
        }
    }

    @Test(.disabled(if: geteuid() == 0, "root bypasses permission bits"))
    func readOnlyFolder() throws {
        let folder = try temporaryFolder()
        defer {
            chmod(folder, 0o700)
            try? FileManager.default.removeItem(atPath: folder)
        }
        chmod(folder, 0o500)
        #expect {
            _ = try FileSink(name: "journal", path: folder + "/x.jsonl")
        } throws: { error in
            "\(error)" == "file sink 'journal': cannot open \(folder)/x.jsonl: Permission denied"
        }
    }
}

@Suite struct FileSinkWriteErrors {
    /// `/dev/full` opens fine and fails every write with ENOSPC: a transient condition.
    @Test func writeErrorIsRetryable() async throws {
        let sink = try FileSink(name: "journal", path: "/dev/full")
        #expect(
            await sink.send(sampleAlert())
                == .retry(reason: "cannot write /dev/full: No space left on device", after: nil))
    }
}
