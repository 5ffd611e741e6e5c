import Testing
@testable import AlertRules
