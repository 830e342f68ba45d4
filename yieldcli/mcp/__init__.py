"""`yield mcp`: the agent face of the library. Tools over the front door (`yieldcli.Client`), the
user's policy, approvals by MCP elicitation, and an audit log. Imports the `mcp` SDK: only
`yield mcp` loads this package, so no other command pays for it."""
