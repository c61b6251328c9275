// A real, third-party OpenID Connect provider (panva's oidc-provider) on loopback, for
// tests/e2e/test_login_oidc_provider.py. Nothing here is ours but the configuration: one
// public client (the dashboard: authorization code + PKCE) and accounts that exist for any
// login, through the provider's own development login and consent pages.
//
//   node provider.mjs <redirect_uri>
//
// Prints one JSON line {"issuer": ...} once it listens; stops on SIGTERM.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';

import Provider from 'oidc-provider';

const CLIENT_ID = 'memory-dashboard';
const redirectUri = process.argv[2];
if (!redirectUri) {
  console.error('usage: node provider.mjs <redirect_uri>');
  process.exit(2);
}

const server = createServer();
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: [{
      client_id: CLIENT_ID,
      token_endpoint_auth_method: 'none',
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
    }],
    async findAccount(ctx, id) {
      return {
        accountId: id,
        async claims() {
          return { sub: id, email: `${id}@example.test`, email_verified: true, name: `User ${id}` };
        },
      };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    // Put the scope's claims (email, name) in the ID token itself, as many providers do.
    conformIdTokenClaims: false,
    cookies: { keys: [randomBytes(32).toString('hex')] },
  });
  server.on('request', provider.callback());
  console.log(JSON.stringify({ issuer, clientId: CLIENT_ID }));
});

process.on('SIGTERM', () => server.close(() => process.exit(0)));
