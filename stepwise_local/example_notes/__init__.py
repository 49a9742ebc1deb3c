"""The example notes server: an MCP server with its own sign-in, on 127.0.0.1, so that people's accounts on
outside MCP servers (OAuth, as MCP's authorization spec defines) can be tried with no account anywhere, in
`make chat` and in the integration tests, where it is the stand-in authorization server and an MCP server
that accepts only its own tokens.

- `server`: `ExampleNotesServer`, the server in a thread (start and stop, its URLs, its state for tests);
- `app`: the HTTP app (the SDK's authorization server routes, resource metadata, `/mcp`, the sign-in page);
- `authorization`: the authorization server's in-memory provider (clients, codes, tokens, revocation);
- `notes`: the MCP tools, `add_note` and `list_notes`, per signed-in person;
- `browser`: playing the person at the sign-in page (`sign_in`, `decline`).
"""
