import AlertPipeline

/// The pipeline's writer of lines for people on standard error, so the command's lines and the
/// pipeline's share one lock and never interleave.
typealias StandardError = AlertPipeline.StandardError
