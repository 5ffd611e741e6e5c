import Testing
@testable import AlertFeeds
