import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// Why a server could not listen, in words a person acts on: `address already in use` rather
/// than SwiftNIO's `bind(descriptor:ptr:bytes:): Address already in use) (errno: 98)`. Shared by
/// `--listen` (`run`, `demo`) and `exchange --port`, which print
/// `cannot listen on HOST:PORT: REASON` and exit 69.
public enum ListenFailure {
    public static func reason(_ error: any Error) -> String {
        guard let io = error as? IOError else { return "\(error)" }
        switch io.errnoCode {
        case EADDRINUSE: return "address already in use"
        case EACCES: return "permission denied (ports below 1024 need privileges)"
        case EADDRNOTAVAIL: return "address not available (no interface of this machine has it)"
        default: return String(cString: strerror(io.errnoCode)).lowercased()
        }
    }
}
