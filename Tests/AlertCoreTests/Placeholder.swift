import Testing
@testable import AlertCore
