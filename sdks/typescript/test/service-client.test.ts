// ServiceClientCredentials: a private_key_jwt assertion signed through WebCrypto (PEM or JWK,
// ES256 or RS256) that a fake token endpoint verifies with the public key, the token reused,
// and fetched again before it ends.

import assert from "node:assert/strict";
import { createPublicKey, generateKeyPairSync, verify, type KeyObject } from "node:crypto";
import { describe, it } from "node:test";

import { ServiceClientCredentials, ServiceClientError } from "../src/index.js";

const CLIENT_ID = "scl_01JQ0000000000000000000000";

function part(text: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(text, "base64url").toString("utf8")) as Record<string, unknown>;
}

function endpoint(publicKey: KeyObject, status = 200) {
  const forms: URLSearchParams[] = [];
  const fetch = async (_url: string, init: { method: string; headers: Record<string, string>; body?: string }) => {
    const form = new URLSearchParams(init.body);
    forms.push(form);
    const [header, claims, signature] = (form.get("client_assertion") ?? "").split(".");
    const rs = part(header ?? "").alg === "RS256";
    const valid = verify(
      rs ? "RSA-SHA256" : "SHA256",
      Buffer.from(`${header}.${claims}`),
      rs ? publicKey : { key: publicKey, dsaEncoding: "ieee-p1363" },
      Buffer.from(signature ?? "", "base64url"),
    );
    const body =
      status === 200 && valid
        ? { access_token: `token-${forms.length}`, token_type: "Bearer", expires_in: 900, scope: "memory" }
        : { error: "invalid_client", error_description: "client_assertion's signature is not valid." };
    return { status: valid ? status : 401, text: async () => JSON.stringify(body) };
  };
  return { fetch, forms };
}

describe("ServiceClientCredentials", () => {
  it("signs an ES256 assertion with a PEM key that the endpoint verifies", async () => {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const { fetch, forms } = endpoint(publicKey);
    const credentials = await ServiceClientCredentials.create({
      endpoint: "http://svc.test/",
      clientId: CLIENT_ID,
      privateKey: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
      fetch,
    });

    const token = await credentials.token();

    assert.equal(token, "token-1");
    const form = forms[0];
    assert.equal(form?.get("grant_type"), "client_credentials");
    assert.equal(form?.get("client_assertion_type"), "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
    const [header, claims] = (form?.get("client_assertion") ?? "").split(".");
    assert.equal(part(header ?? "").alg, "ES256");
    assert.equal(part(header ?? "").kid, credentials.publicJwk.kid);
    const body = part(claims ?? "");
    assert.equal(body.iss, CLIENT_ID);
    assert.equal(body.sub, CLIENT_ID);
    assert.equal(body.aud, "http://svc.test/v1/oauth/token");
    assert.ok((body.exp as number) - (body.iat as number) <= 300);
    assert.equal((credentials.publicJwk as unknown as Record<string, unknown>).d, undefined);
  });

  it("signs RS256 with an RSA JWK and keeps the JWK's kid", async () => {
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const { fetch, forms } = endpoint(publicKey);
    const jwk = { ...privateKey.export({ format: "jwk" }), kid: "machine-1" };
    const credentials = await ServiceClientCredentials.create({ endpoint: "http://svc.test", clientId: CLIENT_ID, privateKey: jwk, fetch });

    await credentials.token();

    const header = part((forms[0]?.get("client_assertion") ?? "").split(".")[0] ?? "");
    assert.deepEqual([header.alg, header.kid], ["RS256", "machine-1"]);
    assert.equal(createPublicKey({ key: JSON.parse(JSON.stringify(credentials.publicJwk)) as Record<string, string>, format: "jwk" }).asymmetricKeyType, "rsa");
  });

  it("reuses the token, then fetches a new one (with a new jti) within a minute of its end", async () => {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const { fetch, forms } = endpoint(publicKey);
    let now = 1_000;
    const credentials = await ServiceClientCredentials.create({
      endpoint: "http://svc.test",
      clientId: CLIENT_ID,
      privateKey: privateKey.export({ format: "jwk" }),
      scope: "memory",
      fetch,
      now: () => now,
    });

    const first = await credentials.token();
    now += 800_000;
    const again = await credentials.token();
    now += 50_000;
    const renewed = await credentials.token();

    assert.deepEqual([first, again, renewed], ["token-1", "token-1", "token-2"]);
    const jtis = new Set(forms.map((f) => part((f.get("client_assertion") ?? "").split(".")[1] ?? "").jti));
    assert.equal(jtis.size, 2);
    assert.equal(forms[0]?.get("scope"), "memory");
  });

  it("a refusal names the error, and the key never shows", async () => {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const other = generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey;
    const { fetch } = endpoint(other);
    const credentials = await ServiceClientCredentials.create({
      endpoint: "http://svc.test",
      clientId: CLIENT_ID,
      privateKey: privateKey.export({ format: "jwk" }),
      fetch,
    });

    await assert.rejects(credentials.token(), (error: unknown) => {
      assert.ok(error instanceof ServiceClientError);
      assert.match(error.message, /401 invalid_client/);
      return true;
    });
    assert.doesNotMatch(String(credentials), /"d"|PRIVATE/);
  });

  it("refuses a public JWK", async () => {
    const { publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });

    await assert.rejects(
      ServiceClientCredentials.create({ endpoint: "http://svc.test", clientId: CLIENT_ID, privateKey: publicKey.export({ format: "jwk" }) }),
      ServiceClientError,
    );
  });
});
