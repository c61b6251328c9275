"""The vocabulary of access, shared by the domains and the decisions above them: who a caller
is (a principal, or a refusal saying why not), the scopes, who may manage keys and
workspaces, and a key's IP allow-list.
"""
