import AlertModel

/// What one websocket frame or one REST response of a source says.
public enum FeedFrame: Sendable, Equatable {
    /// Prices. Ticks without a time of their own carry the receive time.
    case ticks([Tick])
    /// Understood, but not prices: subscription acks, pongs, heartbeats, `connect success`.
    case control
    /// Not understood: dropped and counted, never fatal. The reason names what is wrong.
    case invalid(String)
}
