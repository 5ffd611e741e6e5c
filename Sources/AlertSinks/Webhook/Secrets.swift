import AlertModel
import Platform

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Looks up environment variables; injectable so tests need not touch the process environment.
public typealias EnvironmentLookup = @Sendable (String) -> String?

/// Resolves `SecretSource`s once, when a sink is made. Errors name the sink and the variable
/// or file, never the value.
public enum Secrets {
    /// The process environment (Platform's `Environment`).
    public static let processEnvironment: EnvironmentLookup = { name in Environment.value(name) }

    /// The secret's text. Files are read whole, with one trailing newline (or CRLF) removed,
    /// so `echo TOKEN > file` works. `what` names the setting in errors (`url`, `secret`).
    static func resolve(
        _ source: SecretSource, sink: String, what: String,
        environment: EnvironmentLookup
    ) throws(SinkError) -> String {
        switch source {
        case .inline(let value):
            return value
        case .environment(let variable):
            guard let value = environment(variable), !value.isEmpty else {
                throw SinkError(
                    sink: sink, description: "webhook sink '\(sink)': \(what) variable \(variable) is not set or empty")
            }
            return value
        case .file(let path):
            let text: String
            switch readFile(path) {
            case .success(let bytes): text = String(decoding: bytes, as: UTF8.self)
            case .failure(let error):
                throw SinkError(
                    sink: sink, description: "webhook sink '\(sink)': cannot read \(what) file \(path): \(error)")
            }
            var value = Substring(text)
            if value.hasSuffix("\n") { value = value.dropLast() }
            if value.hasSuffix("\r") { value = value.dropLast() }
            guard !value.isEmpty else {
                throw SinkError(sink: sink, description: "webhook sink '\(sink)': \(what) file \(path) is empty")
            }
            return String(value)
        }
    }

    /// The whole file (bounded to 1 MiB: a secret is never larger).
    static func readFile(_ path: String) -> Result<[UInt8], OSError> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(OSError(code: errno)) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 20 {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                bytes += buffer[0..<n]
            } else if n == 0 {
                break
            } else if errno != EINTR {
                return .failure(OSError(code: errno))
            }
        }
        return .success(bytes)
    }
}
