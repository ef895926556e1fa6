"""The service faces: the HTTP API (`http_api`), the MCP server (`mcp_server`), the web page (`page`) and
the worker processes that serve them (`workers`). The search itself, its cache and its rate limits live in
the package root (`service`, `cache`, `ratelimit`); these modules only parse, check and respond."""
