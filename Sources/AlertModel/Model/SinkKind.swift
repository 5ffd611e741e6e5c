/// What a sink kind's own settings tell the stages before the sink itself (the rule set, the
/// policy, the outbox): its `type` in rule files and how those stages treat it. Each kind's
/// settings conform; the stages ask `SinkKind`, never which kind it is, so a new kind adds a
/// conforming type and no case anywhere.
public protocol SinkSettings: Sendable, Equatable {
    /// The `type` a rule file gives the sink.
    static var typeName: String { get }
    /// Whether an alert for the sink goes through the durable outbox (with a state folder) and
    /// is retried until delivered or dead: true for sinks whose receivers can fail or be away.
    /// Sinks written in place (standard output, a file) say false (the default).
    static var isDurable: Bool { get }
    /// Whether the sink writes alerts to standard output: a command that lists the alerts
    /// there itself leaves such sinks out of what it dispatches. Default false.
    static var printsToStandardOutput: Bool { get }
    /// The environment variables the sink reads a secret from (a URL with a token, a signing
    /// key); no sink that starts a program lets it inherit them. Default none.
    var secretVariables: [String] { get }
    /// The rate the sink gets when it has no `rate` key (a service's published limit). Default nil.
    var defaultRate: RateSpec? { get }
    /// These settings for a sink that must keep `variables` (every other sink's
    /// `secretVariables`) from any program it starts. Default: unchanged.
    func withholding(_ variables: [String]) -> Self
}

extension SinkSettings {
    public static var isDurable: Bool { false }
    public static var printsToStandardOutput: Bool { false }
    public var secretVariables: [String] { [] }
    public var defaultRate: RateSpec? { nil }
    public func withholding(_ variables: [String]) -> Self { self }

    fileprivate func isEqual(to other: any SinkSettings) -> Bool {
        (other as? Self) == self
    }

    fileprivate func kindWithholding(_ variables: [String]) -> SinkKind {
        SinkKind(withholding(variables))
    }
}

/// A sink's kind with its own settings: any type conforming to `SinkSettings`.
public struct SinkKind: Sendable, Equatable {
    public let settings: any SinkSettings

    public init(_ settings: some SinkSettings) {
        self.settings = settings
    }

    public var typeName: String { type(of: settings).typeName }
    /// See `SinkSettings.isDurable`.
    public var isDurable: Bool { type(of: settings).isDurable }
    /// See `SinkSettings.printsToStandardOutput`.
    public var printsToStandardOutput: Bool { type(of: settings).printsToStandardOutput }
    /// See `SinkSettings.secretVariables`.
    public var secretVariables: [String] { settings.secretVariables }
    /// See `SinkSettings.defaultRate`.
    public var defaultRate: RateSpec? { settings.defaultRate }

    /// See `SinkSettings.withholding(_:)`.
    public func withholding(_ variables: [String]) -> SinkKind {
        settings.kindWithholding(variables)
    }

    /// The settings, if they are of type `type`.
    public func settings<Settings: SinkSettings>(as type: Settings.Type) -> Settings? {
        settings as? Settings
    }

    public static func == (a: SinkKind, b: SinkKind) -> Bool {
        a.settings.isEqual(to: b.settings)
    }
}
