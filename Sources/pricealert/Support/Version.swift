/// The version `pricealert --version` prints: the one place it is written.
enum Version {
    static let current = "0.1.0"
}
