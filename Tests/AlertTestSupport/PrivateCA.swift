// The `openssl` command, not a Swift package: the only X.509 writer on the machine (libcurl and
// NIOSSL read certificates; neither makes them).
public import Foundation

/// A private CA and the server certificates a TLS test needs, made by `openssl` in a folder of
/// their own: each one wrong in one way only, so a message can be checked to name that way.
public struct PrivateCA: Sendable {
    /// A certificate and its key (PEM files).
    public struct Served: Sendable {
        public var certificate: String
        public var key: String
    }

    public let folder: URL
    /// The CA's certificate (PEM): what `SSL_CERT_FILE` or a `caFile` names to trust it.
    public let ca: String
    /// For 127.0.0.1 and localhost, signed by the CA, valid for a day.
    public let valid: Served
    /// The same names and CA, but its validity ended before now.
    public let expired: Served
    /// Signed by the CA, valid, for `other.invalid` only.
    public let otherHost: Served
    /// For 127.0.0.1, signed by itself.
    public let selfSigned: Served
    /// For 127.0.0.1, signed by a second CA nobody trusts.
    public let unknownCA: Served

    public struct OpenSSLFailed: Error, CustomStringConvertible {
        public var arguments: [String]
        public var status: Int32
        public var description: String { "openssl \(arguments.joined(separator: " ")) exited \(status)" }
    }

    /// Makes them in a new temporary folder; `remove()` deletes it.
    public init() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        self.folder = folder
        let path = { (name: String) in folder.appendingPathComponent(name).path }
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        func served(_ name: String) -> Served { Served(certificate: path("\(name).pem"), key: path("\(name).key")) }
        ca = path("ca.pem")
        valid = served("valid")
        expired = served("expired")
        otherHost = served("other-host")
        selfSigned = served("self-signed")
        unknownCA = served("unknown-ca")
        let localNames = "subjectAltName=IP:127.0.0.1,DNS:localhost"
        try (localNames + "\n").write(toFile: path("local.ext"), atomically: true, encoding: .utf8)
        try "subjectAltName=DNS:other.invalid\n".write(toFile: path("other.ext"), atomically: true, encoding: .utf8)
        for (name, subject) in [("ca", "/CN=pricealert test CA"), ("other-ca", "/CN=pricealert unknown CA")] {
            try Self.openssl(
                ["req", "-x509"] + key + [
                    "-keyout", path("\(name).key"), "-out", path("\(name).pem"),
                    "-days", "2", "-subj", subject
                ])
        }
        // `-days -1`: the validity ends a day before it begins, which is now.
        for (served, ca, days, ext, serial) in [
            (valid, "ca", "1", "local.ext", "2"), (expired, "ca", "-1", "local.ext", "3"),
            (otherHost, "ca", "1", "other.ext", "4"),
            (unknownCA, "other-ca", "1", "local.ext", "5")
        ] {
            try Self.openssl(
                ["req"] + key + ["-keyout", served.key, "-out", path("request.csr"), "-subj", "/CN=127.0.0.1"])
            try Self.openssl([
                "x509", "-req", "-in", path("request.csr"), "-CA", path("\(ca).pem"), "-CAkey", path("\(ca).key"),
                "-set_serial", serial, "-days", days, "-extfile", path(ext), "-out", served.certificate
            ])
        }
        try Self.openssl(
            ["req", "-x509"] + key + [
                "-keyout", selfSigned.key, "-out", selfSigned.certificate, "-days", "1",
                "-subj", "/CN=127.0.0.1", "-addext", localNames
            ])
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
