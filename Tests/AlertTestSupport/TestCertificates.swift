// The `openssl` command, not a Swift package: the only X.509 writer on the machine that the
// build already has (libcurl and NIOSSL read certificates; neither makes them).
public import Foundation

/// A test CA and server certificates for 127.0.0.1 that it signed, made by `openssl` into a
/// folder of their own: `valid` (good for a day) and `expired` (its validity ended before now).
/// Trust `ca` (a webhook's `caFile`) and serve either.
public struct TestCertificates: Sendable {
    public struct Pair: Sendable {
        public var certificate: String
        public var key: String
    }

    public let folder: URL
    /// The CA's certificate (PEM).
    public let ca: String
    public let valid: Pair
    public let expired: Pair

    public struct OpenSSLFailed: Error, CustomStringConvertible {
        public var arguments: [String]
        public var status: Int32
        public var description: String { "openssl \(arguments.joined(separator: " ")) exited \(status)" }
    }

    /// Makes them in a new temporary folder; `remove()` deletes it.
    public init() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-certs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        self.folder = folder
        let path = { (name: String) in folder.appendingPathComponent(name).path }
        ca = path("ca.pem")
        valid = Pair(certificate: path("valid.pem"), key: path("server.key"))
        expired = Pair(certificate: path("expired.pem"), key: path("server.key"))
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try Self.openssl(["req", "-x509"] + ec + ["-keyout", path("ca.key"), "-out", ca, "-days", "2",
                                                  "-subj", "/CN=pricealert test CA"])
        try Self.openssl(["req"] + ec + ["-keyout", valid.key, "-out", path("server.csr"), "-subj", "/CN=127.0.0.1"])
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: path("server.ext"), atomically: true, encoding: .utf8)
        // `-days -1`: the certificate's validity ends a day before it begins, which is now.
        for (pair, days, serial) in [(valid, "1", "2"), (expired, "-1", "3")] {
            try Self.openssl(["x509", "-req", "-in", path("server.csr"), "-CA", ca, "-CAkey", path("ca.key"),
                              "-set_serial", serial, "-days", days, "-extfile", path("server.ext"),
                              "-out", pair.certificate])
        }
    }

    public func remove() {
        try? FileManager.default.removeItem(at: folder)
    }

    private static func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw OpenSSLFailed(arguments: arguments, status: process.terminationStatus)
        }
    }
}
