import AlertModel
import AlertRules

/// A `webhook` sink in a rule file: where to post (exactly one of `url`, `urlEnv`, `urlFile`)
/// and how (Docs/rules.md#sinks).
extension WebhookSpec {
    static let methods = ["POST", "PUT", "PATCH", "GET"]
    static let presets = ["json", "slack", "discord", "ntfy", "telegram", "alertmanager", "alertmanager-webhook"]

    /// The settings of a webhook sink, or nil after reporting what is wrong; with no valid URL
    /// its other keys are not checked.
    @Sendable static func read(_ checker: inout SinkSettingsChecker) -> WebhookSpec? {
        let url = source(&checker, of: ["url", "urlEnv", "urlFile"], required: true)
        let secret = source(&checker, of: ["secretEnv", "secretFile"], required: false)
        guard let url else { return nil }
        var spec = WebhookSpec(url: url, secret: secret)
        spec.method = checker.choice("method", among: methods) ?? spec.method
        spec.headers = checker.stringsByName("headers", entry: "header") ?? spec.headers
        spec.timeout = checker.duration("timeout", atMost: "1h") ?? spec.timeout
        spec.preset = checker.choice("preset", among: presets) ?? spec.preset
        spec.template = checker.string("template", nonEmpty: false)
        spec.caFile = checker.string("caFile")
        return spec
    }

    /// At most one (exactly one if `required`) of the keys, each naming an inline value
    /// (`url`), an environment variable (`…Env`) or a file (`…File`).
    private static func source(
        _ checker: inout SinkSettingsChecker, of keys: [String], required: Bool
    ) -> SecretSource? {
        guard let (key, text) = checker.oneOf(keys, noun: "webhook", required: required) else { return nil }
        if key.hasSuffix("Env") { return .environment(text) }
        if key.hasSuffix("File") { return .file(text) }
        let lower = text.lowercased()
        let scheme = ["http://", "https://"].first { lower.hasPrefix($0) }
        guard let scheme, lower.count > scheme.count else {
            checker.error("webhook url must be http or https", at: key)
            return nil
        }
        return .inline(text)
    }
}
