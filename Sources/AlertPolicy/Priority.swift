import AlertModel

/// The priority stage (Docs/sinks.md#priority): a `"priority": "high"` event skips quiet hours
/// and groups and is delivered alone, at once; rate limits and retries still apply.
public struct PriorityStage: Stage {
    public init() {}

    public mutating func receive(_ event: PolicyEvent) -> StageStep {
        event.highPriority ? .taken([.event(event.alert)], urgent: true) : .pass
    }
}
