import HummingbirdWebSocket
import NIOCore
import NIOWebSocket

#if canImport(Glibc)
import Glibc
#endif

/// The writer of one websocket connection, BTSE's or a look-alike's: drains the connection's
/// queue in the hub into the socket, in order, and returns when a close or a reset ends the
/// connection or when the queue ends.
enum ConnectionWriter {
    /// `prices` gives the text frames of a price message for this connection (BTSE renders
    /// `.price`, a look-alike `.update`; each frame counts in `framesSent`), `notice` those of
    /// the shutdown notice.
    static func drain(
        _ outgoing: AsyncStream<ConnectionHub.Outgoing>, to outbound: WebSocketOutboundWriter, channel: (any Channel)?,
        stats: StatsCounter, prices: (ConnectionHub.Outgoing) -> [String], notice: () -> [String] = { [] },
        stamp: (String) -> String = { $0 }
    ) async throws {
        // `stamp` sees every text message in the order it is written (one task writes them all),
        // so a number it gives (Coinbase's `sequence_num`) follows the order the client reads.
        for await message in outgoing {
            switch message {
            case .control(let text):
                try await outbound.write(.text(stamp(text)))
            case .price, .update:
                for text in prices(message) {
                    try await outbound.write(.text(stamp(text)))
                    stats.update { $0.framesSent += 1 }
                }
            case .invalid(let text):
                try await outbound.write(.text(text))
                stats.update { $0.invalidFramesSent += 1 }
            case .ping(let payload):
                try await outbound.write(
                    .custom(WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer(bytes: payload))))
            case .shutdownNotice:
                for text in notice() { try await outbound.write(.text(text)) }
            case .close:
                try await outbound.close(.goingAway, reason: "closed by the demo exchange")
                return
            case .closeWith(let code, let reason):
                try await outbound.close(.init(codeNumber: Int(code)), reason: reason)
                return
            case .reset:
                if let channel { await reset(channel) }
                return
            }
        }
    }

    /// Closes the TCP connection with a reset (RST, no close frame): `SO_LINGER` 0, then close;
    /// returns once it is closed, so nothing written after can go out before the reset.
    static func reset(_ channel: any Channel) async {
        // Every socket channel of NIOPosix provides socket options; the TLS handler sits in the
        // pipeline, so a TLS connection's channel is one too.
        if let sockets = channel as? any SocketOptionProvider {
            try? await sockets.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
        }
        try? await channel.close().get()
    }
}
