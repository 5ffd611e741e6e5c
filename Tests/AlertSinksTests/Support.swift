import AlertModel
import Foundation

func sampleAlert(_ rule: String = "btc-100k", time: Int64 = 1_700_000_000_000, notify: [String] = ["a"]) -> Alert {
    Alert(
        rule: rule, symbol: "BTC", time: time, price: 100012.5, condition: "price crossesAbove 100000",
        threshold: .value(100000), value: 100012.5, message: "BTC \"crossed\"\n100k", notify: notify)
}

/// A fresh empty folder under the temporary directory.
func temporaryFolder() throws -> String {
    let path = NSTemporaryDirectory() + "pricealert-sinks-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    return path
}

/// Writes an executable file with a close-on-exec descriptor: a child spawned by a concurrent
/// test must not inherit it open for writing, or running the file fails with ETXTBSY.
func writeExecutable(_ path: String, _ contents: String) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
    guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    defer { close(fd) }
    let bytes = Array(contents.utf8)
    guard write(fd, bytes, bytes.count) == bytes.count else { throw POSIXError(.EIO) }
}
