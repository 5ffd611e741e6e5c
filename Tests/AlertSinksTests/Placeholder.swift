import Testing
@testable import AlertSinks
