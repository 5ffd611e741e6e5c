// The libcurl-backed HTTP client lives here.
