/// A named sink from a rule file's `sinks` object (Docs/rules.md#sinks), validated.
/// Delivery lives in `AlertSinks` and `AlertOutbox`; this is only the configuration.
public struct SinkDefinition: Sendable, Equatable {
    public var name: String
    public var kind: SinkKind
    /// How the outbox delivers to it (webhook and exec sinks only).
    public var delivery: DeliverySettings
    /// Quiet hours, groups, rate and fallback (Docs/sinks.md#notification-policy).
    public var policy: SinkPolicy

    public init(
        name: String, kind: SinkKind, delivery: DeliverySettings = DeliverySettings(),
        policy: SinkPolicy = SinkPolicy()
    ) {
        self.name = name
        self.kind = kind
        self.delivery = delivery
        self.policy = policy
    }

    /// The sink named `stdout` that exists unless a file defines that name (Docs/rules.md#sinks).
    public static let builtinStdout = SinkDefinition(name: "stdout", kind: .stdout(format: .text))
}

/// A webhook or exec sink's own `concurrency` and `retry` keys; nil where the rule file leaves
/// the built-in default.
public struct DeliverySettings: Sendable, Equatable {
    /// Attempts in flight at once (never two of the same rule).
    public var concurrency: Int?
    /// Milliseconds: the first retry waits up to `backoff`, each further one up to twice as long
    /// as the one before, never more than `maxBackoff`; an alert still failing `maxAge` after it
    /// was made becomes a dead letter.
    public var backoff: Int64?
    public var maxBackoff: Int64?
    public var maxAge: Int64?

    public init(concurrency: Int? = nil, backoff: Int64? = nil, maxBackoff: Int64? = nil, maxAge: Int64? = nil) {
        self.concurrency = concurrency
        self.backoff = backoff
        self.maxBackoff = maxBackoff
        self.maxAge = maxAge
    }
}

public enum AlertOutputFormat: String, Sendable, Equatable {
    case text
    case json
}

/// A `stdout` sink's settings: one line per alert on standard output.
public struct StdoutSettings: SinkSettings {
    public static let typeName = "stdout"
    public static let printsToStandardOutput = true
    public var format: AlertOutputFormat

    public init(format: AlertOutputFormat) {
        self.format = format
    }
}

/// A `file` sink's settings: appends one JSON line per alert.
public struct FileSettings: SinkSettings {
    public static let typeName = "file"
    /// As written (relative to the working directory).
    public var path: String

    public init(path: String) {
        self.path = path
    }
}

extension SinkKind {
    public static func stdout(format: AlertOutputFormat) -> SinkKind { SinkKind(StdoutSettings(format: format)) }
    public static func file(path: String) -> SinkKind { SinkKind(FileSettings(path: path)) }
    public static func webhook(_ spec: WebhookSpec) -> SinkKind { SinkKind(spec) }
    public static func exec(_ spec: ExecSpec) -> SinkKind { SinkKind(spec) }
}

/// Where a secret comes from. Inline values are allowed only where a secret is not required
/// to be hidden (a plain URL without credentials); everything else comes from the environment
/// or a file so it never sits in a rule file.
public enum SecretSource: Sendable, Equatable {
    case inline(String)
    case environment(String)
    case file(String)
}

public struct WebhookSpec: Sendable, Equatable {
    public var url: SecretSource
    public var method: String
    public var headers: [String: String]
    /// Milliseconds.
    public var timeout: Int64
    /// `json` (default), `slack`, `discord`, `ntfy`, `telegram`, `alertmanager`.
    public var preset: String
    public var template: String?
    public var secret: SecretSource?
    public var caFile: String?

    public init(
        url: SecretSource, method: String = "POST", headers: [String: String] = [:], timeout: Int64 = 10_000,
        preset: String = "json", template: String? = nil, secret: SecretSource? = nil, caFile: String? = nil
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.timeout = timeout
        self.preset = preset
        self.template = template
        self.secret = secret
        self.caFile = caFile
    }
}

public struct ExecSpec: Sendable, Equatable {
    /// argv; never run through a shell.
    public var command: [String]
    /// Milliseconds.
    public var timeout: Int64
    /// Environment variables the program must not inherit: those that hold the webhook URLs
    /// and signing secrets of the rule files (every `urlEnv` and `secretEnv`).
    public var withheldVariables: [String]

    public init(command: [String], timeout: Int64 = 10_000, withheldVariables: [String] = []) {
        self.command = command
        self.timeout = timeout
        self.withheldVariables = withheldVariables
    }
}

extension WebhookSpec: SinkSettings {
    public static let typeName = "webhook"
    public static let isDurable = true

    /// `urlEnv` and `secretEnv`.
    public var secretVariables: [String] {
        [url, secret].compactMap { source in
            if case .environment(let name)? = source { return name }
            return nil
        }
    }

    /// A preset's published rate (`presetRate(_:)`), unless a `template` replaces its body.
    public var defaultRate: RateSpec? {
        template == nil ? Self.presetRate(preset) : nil
    }

    /// The rate a webhook preset gets when its sink has no `rate` key: the platform's published
    /// limit for one chat, channel or topic (sources in Docs/sinks.md#preset-rates).
    public static func presetRate(_ preset: String) -> RateSpec? {
        switch preset {
        case "telegram": return RateSpec(count: 1, per: 1_000) // one message per second per chat
        case "slack": return RateSpec(count: 1, per: 1_000) // incoming webhooks: one per second
        case "discord": return RateSpec(count: 1, per: 2_000) // 30 per minute per channel, 5 per 2 s per webhook
        case "ntfy": return RateSpec(count: 60, per: 300_000) // a burst of 60, then one per 5 s
        default: return nil
        }
    }
}

extension ExecSpec: SinkSettings {
    public static let typeName = "exec"
    public static let isDurable = true

    public func withholding(_ variables: [String]) -> ExecSpec {
        var spec = self
        spec.withheldVariables = variables
        return spec
    }
}
