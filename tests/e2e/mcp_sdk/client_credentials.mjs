// The TypeScript MCP SDK's own PrivateKeyJwtProvider (client_credentials with private_key_jwt)
// against the local stack: connects to the MCP resource, lets the SDK discover our
// authorization server and get a token, calls `whoami`, prints what came back as JSON.
//
//   MCP_RESOURCE=… ISSUER=… CLIENT_ID=scl_… PRIVATE_KEY_PEM=… SCOPE=… node client_credentials.mjs

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { PrivateKeyJwtProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const { MCP_RESOURCE, ISSUER, CLIENT_ID, PRIVATE_KEY_PEM, SCOPE } = process.env;
const provider = new PrivateKeyJwtProvider({
  clientId: CLIENT_ID,
  privateKey: PRIVATE_KEY_PEM,
  algorithm: "ES256",
  scope: SCOPE,
  expectedIssuer: ISSUER,
});
const client = new Client({ name: "memory-auth e2e machine", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(MCP_RESOURCE), { authProvider: provider });
try {
  await client.connect(transport);
  const result = await client.callTool({ name: "whoami", arguments: {} });
  const tokens = provider.tokens();
  console.log(JSON.stringify({ result, accessToken: tokens?.access_token, refreshToken: tokens?.refresh_token ?? null }));
  await client.close();
} catch (error) {
  console.log(JSON.stringify({ error: String(error?.message ?? error) }));
  process.exitCode = 1;
}
