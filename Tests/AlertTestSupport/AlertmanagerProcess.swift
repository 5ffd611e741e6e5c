public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real Prometheus Alertmanager (Debian's `prometheus-alertmanager`, installed by `.ci/run`)
/// for tests: started on a free 127.0.0.1 port with its own configuration and storage in a
/// temporary folder, without a cluster (`--cluster.listen-address=` empty), never the system
/// service. Its one route sends everything to a receiver that notifies no one, so what it holds
/// is read back through its API (`/api/v2/alerts`, `/api/v2/silences`).
public enum AlertmanagerProcess {
    /// Where Debian installs it.
    public static let binary = URL(fileURLWithPath: "/usr/bin/prometheus-alertmanager")

    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: binary.path) }

    public struct DidNotStart: Error, CustomStringConvertible {
        public var output: String
        public var description: String { "prometheus-alertmanager did not start; it wrote:\n\(output)" }
    }

    /// Runs `body` with the base URL (`http://127.0.0.1:PORT`) of a fresh Alertmanager that is
    /// listening, then stops it and removes its folder (also when `body` throws).
    public static func with<T: Sendable>(_ body: @Sendable (String) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-am-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("alertmanager.yml")
        try """
        route:
          receiver: nobody
        receivers:
          - name: nobody
        """.write(to: config, atomically: true, encoding: .utf8)
        // The port is free when asked and taken by the time Alertmanager binds it only if
        // another program raced for it: then it ends at once and the next port is tried.
        var output = ""
        for _ in 0..<5 {
            let port = try freePort()
            let process = try ObservedProcess(
                binary,
                [
                    "--config.file=\(config.path)", "--storage.path=\(folder.appendingPathComponent("data").path)",
                    "--web.listen-address=127.0.0.1:\(port)", "--cluster.listen-address="
                ])
            do {
                _ = try await process.line(.stderr, containing: "Listening on", timeout: 60)
            } catch {
                output = process.stderr
                _ = try? await process.stop(signal: SIGTERM)
                continue
            }
            let result: Result<T, any Error>
            do { result = .success(try await body("http://127.0.0.1:\(port)")) } catch { result = .failure(error) }
            _ = try? await process.stop(signal: SIGTERM)
            return try result.get()
        }
        throw DidNotStart(output: output)
    }

    /// A TCP port on 127.0.0.1 that nothing listens on now (the system picks it).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(fd, address, length) == 0 && getsockname(fd, address, &length) == 0
            }
        }
        guard bound else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
