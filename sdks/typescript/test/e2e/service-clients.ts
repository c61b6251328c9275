// Service clients against the local stack: the owner registers a machine's public key with
// client.workspaces, the machine gets a workspace token with its private key alone
// (ServiceClientCredentials), and deleting the client ends that token on its next request.

import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { describe, it } from "node:test";

import { AuthenticationError, MemoryClient, ServiceClientCredentials, ServiceClientError } from "../../src/index.js";
import { rejection } from "../assertions.js";
import type { StackInfo } from "../stack.js";

export function serviceClientSuite(stack: () => StackInfo): void {
  describe("service clients: private_key_jwt and client_credentials", () => {
    it("a machine's token works until its client is deleted", async () => {
      const info = stack();
      const owner = new MemoryClient({ endpoint: info.endpoint, tokenProvider: () => info.token });
      const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
      const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
      // The public half, as the owner registers it (any client id: only the key matters).
      const draft = await ServiceClientCredentials.create({
        endpoint: info.endpoint,
        clientId: "scl_01JQ0000000000000000000000",
        privateKey: pem,
      });

      const created = await owner.workspaces.createServiceClient(info.workspaceId, {
        name: "e2e machine (ts)",
        scopes: ["memory"],
        jwks: { keys: [draft.publicJwk as never] },
      });
      const listed = await owner.workspaces.listServiceClients(info.workspaceId);
      const credentials = await ServiceClientCredentials.create({
        endpoint: info.endpoint,
        clientId: created.clientId,
        privateKey: pem,
      });
      const machine = new MemoryClient({ endpoint: info.endpoint, tokenProvider: credentials.tokenProvider });
      const whoami = await machine.auth.whoami();
      await owner.workspaces.deleteServiceClient(info.workspaceId, created.clientId);
      const after = await rejection(machine.auth.whoami());
      const fresh = await ServiceClientCredentials.create({ endpoint: info.endpoint, clientId: created.clientId, privateKey: pem });
      const refused = await rejection(fresh.token());

      assert.match(created.clientId, /^scl_/);
      assert.ok(listed.some((c) => c.clientId === created.clientId));
      assert.equal(whoami.credential, "service_client");
      assert.equal(whoami.workspaceId, info.workspaceId);
      assert.ok(after instanceof AuthenticationError);
      assert.ok(refused instanceof ServiceClientError);
      assert.match(refused.message, /invalid_client/);
    });
  });
}
