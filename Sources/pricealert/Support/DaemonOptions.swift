import AlertPipeline
import ArgumentParser

/// `--listen` and `--drain-timeout`, shared by `run` and `demo`.
struct DaemonOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Serve /metrics (Prometheus) and /healthz on this address, e.g. 127.0.0.1:9464 (port 0: any free port, logged). No authentication: keep it on loopback.",
            valueName: "host:port"))
    var listen: ListenAddress?

    @Option(
        help:
            "At shutdown, how long the outbox may take to deliver what is due (e.g. 10s); the rest is sent on the next start."
    )
    var drainTimeout: DurationArgument = DurationArgument(.seconds(10))
}

/// `HOST:PORT`, `[IPv6]:PORT`.
extension ListenAddress: ExpressibleByArgument {
    public init?(argument: String) {
        guard let colon = argument.lastIndex(of: ":"), let port = Int(argument[argument.index(after: colon)...]),
            (0...65535).contains(port)
        else { return nil }
        var host = String(argument[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !host.contains("[") else { return nil }
        self.init(host: host, port: port)
    }
}
