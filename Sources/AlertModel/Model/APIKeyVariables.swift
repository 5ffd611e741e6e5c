/// The environment variables pricealert reads source API keys from. The sources send them as
/// headers; no exec notifier inherits them (`ExecSink` withholds them with the webhooks'
/// `urlEnv` and `secretEnv` variables), so a key reaches only the API it belongs to.
public enum APIKeyVariables {
    public static let coinGecko = "COINGECKO_API_KEY"
    public static let coinRanking = "COINRANKING_API_KEY"
    /// Every one of them.
    public static let all: Set<String> = [coinGecko, coinRanking]
}
