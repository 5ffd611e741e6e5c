import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// What a failed SwiftNIO connection or request says to a person: one short reason
/// (`connection refused`, `TLS handshake failed: certificate expired (…)`), never a nested
/// dump of NIO's error values or a path of the machine that built pricealert.
public enum NIOFailure {
    /// The kind and the reason for `error`, from a connection to `host` whose TLS handshake
    /// failed for `tls`'s reason, if it did. Names hosts and ports, never a path.
    public static func explain(_ error: any Error, tls: TLSFailure? = nil, host: String) -> (HTTPError.Kind, String) {
        // A failed handshake closes the channel: say why, not that it closed.
        if let reason = tls?.reason { return (.tls, reason) }
        switch error {
        case let error as NIOConnectionError:
            if let first = error.connectionErrors.first { return explain(first.error, host: host) }
            if error.dnsAError != nil || error.dnsAAAAError != nil {
                return (.dns, "cannot resolve host \(error.host)")
            }
            return (.other, "cannot connect to \(error.host) port \(error.port)")
        case ChannelError.connectTimeout(let limit):
            return (.timeout, "no connection within \(limit.nanoseconds / 1_000_000) ms")
        case let error as IOError where error.errnoCode == ECONNREFUSED:
            return (.connectionRefused, "connection refused")
        case let error as IOError where error.errnoCode == ECONNRESET:
            return (.other, "connection reset by the server")
        case let error as IOError:
            return (.other, String(cString: strerror(error.errnoCode)))
        case HTTPParserError.headerOverflow:
            return (.other, "response headers larger than \(sizeText(ResponseLimit.maxHeaderBytes))")
        case let error as HTTPParserError:
            return (.other, "malformed HTTP response (\(error))")
        default:
            if let reason = ClientTLS.reason(error, leaf: nil, host: host) { return (.tls, reason) }
            return (.other, "\(error)")
        }
    }
}
