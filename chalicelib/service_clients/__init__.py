"""Service clients: machines that get workspace tokens with `client_credentials` and a
`private_key_jwt` assertion (RFC 7523 §2.2), their keys registered, no secret stored."""
