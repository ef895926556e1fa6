"""The service's interfaces: the HTTP API (`http_api`, behind `guard`, with the response shapes of
`search_shapes` and `read_shapes` and the document of `openapi`), the MCP server (`mcp_server`), the web page
(`page`) and the worker processes that serve them (`workers`). The search itself, its cache and its rate limits
live elsewhere (`service`, `state/`); these modules only parse, check and respond."""
