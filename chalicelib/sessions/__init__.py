"""A person's sessions: an OpenID Connect ID token exchanged for an access token and a refresh
token, the refresh that rotates them, and the users they belong to. The MCP authorization
server issues its tokens with the same pieces.
"""
