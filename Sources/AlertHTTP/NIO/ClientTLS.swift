import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Platform
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The TLS of the feeds' SwiftNIO connections (REST and websockets): which roots they trust,
/// and what a failed connection says.
///
/// Trust: a request's own `caFile`, else `SSL_CERT_FILE` (a PEM bundle that replaces the
/// system's, as OpenSSL reads it), else `SSL_CERT_DIR` (a directory of certificates named by
/// their hash, `openssl rehash`), else the system's bundle. Webhooks read the same variables
/// (`CurlTransfer`), so one setting trusts a private CA everywhere.
public enum ClientTLS {
    /// `SSL_CERT_FILE`, when set and not empty (read once per process).
    public static let certFile: String? = environmentPath("SSL_CERT_FILE")
    /// `SSL_CERT_DIR`, when set and not empty (read once per process).
    public static let certDirectory: String? = environmentPath("SSL_CERT_DIR")

    private static func environmentPath(_ name: String) -> String? {
        guard let value = Environment.value(name), !value.isEmpty else { return nil }
        return value
    }

    /// The client context that trusts `caFile`, or the default roots (made once).
    public static func context(caFile: String? = nil) throws(ClientTLSError) -> NIOSSLContext {
        if let caFile { return try make(file: caFile, what: "the CA file \(caFile)") }
        return try defaultContext.get()
    }

    private static let defaultContext = Result { () throws(ClientTLSError) -> NIOSSLContext in
        if let certFile { return try make(file: certFile, what: "SSL_CERT_FILE=\(certFile)") }
        if let certDirectory { return try make(file: certDirectory, what: "SSL_CERT_DIR=\(certDirectory)") }
        return try make(file: nil, what: "the system's trust roots")
    }

    /// `file`: a PEM bundle or a hashed directory (NIOSSL hands either to BoringSSL).
    private static func make(file: String?, what: String) throws(ClientTLSError) -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let file { configuration.trustRoots = .file(file) }
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw ClientTLSError(reason: "cannot use \(what): \(words(error))")
        }
    }

    /// Adds the TLS client handler for `host` (no SNI for an address) and, behind it, the watch
    /// that puts the reason of a failed handshake in `failure`.
    public static func addHandlers(
        _ context: NIOSSLContext, host: String, isAddress: Bool,
        failure: TLSFailure, to pipeline: ChannelPipeline.SynchronousOperations
    ) throws {
        try pipeline.addHandler(NIOSSLClientHandler(context: context, serverHostname: isAddress ? nil : host))
        try pipeline.addHandler(HandshakeFailureWatch(failure: failure, host: host))
    }

    /// Why the handshake failed, in words: what is wrong with the server's certificate when
    /// verification failed (`leaf`: the certificate it sent, when known), else BoringSSL's reason
    /// names (never its source paths or error codes).
    static func reason(_ error: any Error, leaf: NIOSSLCertificate?, host: String) -> String? {
        switch error {
        case let error as NIOSSLExtraError where error == .failedToValidateHostname:
            return "certificate is for another host (not \(host))"
        case let error as NIOSSLError:
            switch error {
            case .handshakeFailed(let inner): return handshake(inner, leaf: leaf)
            case .uncleanShutdown: return "the server ended the TLS connection without a close_notify"
            default: return words(error)
            }
        case let error as BoringSSLError:
            return handshake(error, leaf: leaf)
        case let error as NIOSSLExtraError:
            return words(error)
        default:
            return nil
        }
    }

    private static func handshake(_ error: BoringSSLError, leaf: NIOSSLCertificate?) -> String {
        let names = reasonNames(error)
        guard names.contains("CERTIFICATE_VERIFY_FAILED") else {
            if names.contains("WRONG_VERSION_NUMBER") {
                return "TLS handshake failed: the server does not speak TLS (wrong version number)"
            }
            let text = names.map { $0.lowercased().replacingOccurrences(of: "_", with: " ") }
            return "TLS handshake failed" + (text.isEmpty ? "" : ": " + text.joined(separator: "; "))
        }
        return "TLS handshake failed: " + certificateProblem(leaf)
    }

    /// What is wrong with a certificate verification refused: the usual causes, in the order a
    /// person would check them.
    static func certificateProblem(_ leaf: NIOSSLCertificate?) -> String {
        guard let leaf else { return "certificate not trusted" }
        let now = time(nil)
        if now > leaf.notValidAfter { return "certificate expired (not valid after \(date(leaf.notValidAfter)))" }
        if now < leaf.notValidBefore { return "certificate not valid yet (not before \(date(leaf.notValidBefore)))" }
        if leaf.subjectName == leaf.issuerName { return "self-signed certificate" }
        return "certificate not trusted (unknown CA)"
    }

    /// `2026-11-27`, in UTC.
    private static func date(_ seconds: time_t) -> String {
        var seconds = seconds
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))"
    }

    /// BoringSSL's reason names (`CERTIFICATE_VERIFY_FAILED`), from entries that read
    /// `Error: N error:1000007d:SSL routines:OPENSSL_internal:REASON at FILE:LINE`.
    private static func reasonNames(_ error: BoringSSLError) -> [String] {
        let stack: NIOBoringSSLErrorStack
        switch error {
        case .sslError(let errors), .unknownError(let errors), .invalidSNIName(let errors),
            .failedToSetALPN(let errors):
            stack = errors
        default:
            return [words(error)]
        }
        return stack.compactMap { entry in
            let text = "\(entry)"
            guard let start = text.firstRange(of: "error:") else { return nil }
            var rest = text[start.upperBound...]
            if let at = rest.firstRange(of: " at ") { rest = rest[..<at.lowerBound] }
            return rest.split(separator: ":").last.map(String.init)
        }
    }

    /// `error` without its module and type prefix.
    static func words(_ error: any Error) -> String {
        "\(error)".replacingOccurrences(of: "NIOSSLExtraError.", with: "").replacingOccurrences(of: "NIOSSL.", with: "")
    }
}

/// A TLS context that could not be made: names the file or setting and the reason.
public struct ClientTLSError: Error, Sendable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}

/// Why one connection's TLS handshake failed, in `ClientTLS.reason`'s words, kept when it
/// happens: the server's certificate is readable only then, and the connection's own error
/// may only say that it closed.
public final class TLSFailure: Sendable {
    private let words = Mutex<String?>(nil)

    public init() {}

    /// The reason, once the handshake failed.
    public var reason: String? { words.withLock { $0 } }

    func keep(_ reason: String) {
        words.withLock { $0 = $0 ?? reason }
    }
}

/// Sits right behind the TLS handler: when the handshake fails, reads the certificate the
/// server sent (still held by the connection then) and keeps the reason, before the error
/// travels on.
private final class HandshakeFailureWatch: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    let failure: TLSFailure
    let host: String

    init(failure: TLSFailure, host: String) {
        self.failure = failure
        self.host = host
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let tls = try? context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self)
        if let reason = ClientTLS.reason(error, leaf: tls?.peerCertificate, host: host) { failure.keep(reason) }
        context.fireErrorCaught(error)
    }
}
