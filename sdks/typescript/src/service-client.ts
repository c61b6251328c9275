// Service clients: a machine's workspace tokens with no shared secret (RFC 7523 §2.2).
//
// The workspace owner registers the machine's public key (a JWKS, or a JWKS URI) and gets a
// client id (`scl_…`). The machine holds the private key (PKCS#8 PEM or a JWK, RSA or P-256);
// ServiceClientCredentials signs a short private_key_jwt assertion with it through WebCrypto
// (RS256 or ES256, iss = sub = the client id, aud the token endpoint, a fresh jti, 60 s), sends
// it with grant_type=client_credentials to /v1/oauth/token, and does so again before the token
// ends. The key is imported non-extractable: nothing here can hand it back.
//
//   const credentials = await ServiceClientCredentials.create({ endpoint, clientId, privateKey });
//   const client = new MemoryClient({ endpoint, tokenProvider: credentials.tokenProvider });

import { MemorySDKError } from "./errors.js";
import { type Fetch, requestToken } from "./token-request.js";
import type { TokenProvider } from "./transport.js";

export const CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
export const SERVICE_CLIENT_REFRESH_MARGIN_MS = 60_000;
const ASSERTION_LIFETIME_S = 60;

/** The token request was refused, or the key is unusable; never holds a key or a token. */
export class ServiceClientError extends MemorySDKError {
  override name = "ServiceClientError";
}

/** A JSON Web Key (RFC 7517), the members this SDK reads: its own type rather than the DOM
 * library's `JsonWebKey`, so that a Node program's types check without that library. */
export interface Jwk {
  kty?: string;
  crv?: string;
  x?: string;
  y?: string;
  n?: string;
  e?: string;
  d?: string;
  p?: string;
  q?: string;
  dp?: string;
  dq?: string;
  qi?: string;
  alg?: string;
  kid?: string;
  use?: string;
  key_ops?: string[];
  ext?: boolean;
}

export interface ServiceClientOptions {
  endpoint: string;
  clientId: string;
  /** A PKCS#8 PEM (its first line names a PRIVATE KEY) or a private JWK (RSA, or EC on P-256). */
  privateKey: string | Jwk;
  /** The `kid` the key was registered with (default: a JWK's own `kid`, else its RFC 7638 thumbprint). */
  keyId?: string | undefined;
  scope?: string | undefined;
  resource?: string | undefined;
  expiresIn?: number | undefined;
  fetch?: Fetch;
  /** Milliseconds of a monotonic clock; tests pass one they move. */
  now?: () => number;
}

type Algorithm = "RS256" | "ES256";

function b64url(bytes: Uint8Array): string {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

const utf8 = (text: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(text) as Uint8Array<ArrayBuffer>;

function pkcs8(pem: string): ArrayBuffer {
  const body = pem.replace(/-----(BEGIN|END) PRIVATE KEY-----/g, "").replace(/\s+/g, "");
  if (!pem.includes("BEGIN PRIVATE KEY") || body === "") {
    throw new ServiceClientError("privateKey must be a PKCS#8 PEM (BEGIN PRIVATE KEY) or a JWK.");
  }
  const raw = atob(body);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i += 1) bytes[i] = raw.charCodeAt(i);
  return bytes.buffer;
}

/** RFC 7638: the SHA-256 of the public key's required members, sorted. */
export async function thumbprint(jwk: Jwk): Promise<string> {
  const members: Record<string, unknown> =
    jwk.kty === "RSA" ? { e: jwk.e, kty: "RSA", n: jwk.n } : { crv: jwk.crv, kty: "EC", x: jwk.x, y: jwk.y };
  const digest = await crypto.subtle.digest("SHA-256", utf8(JSON.stringify(members)));
  return b64url(new Uint8Array(digest));
}

const PARAMETERS: Record<Algorithm, { import: RsaHashedImportParams | EcKeyImportParams; sign: AlgorithmIdentifier | EcdsaParams }> = {
  RS256: { import: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, sign: { name: "RSASSA-PKCS1-v1_5" } },
  ES256: { import: { name: "ECDSA", namedCurve: "P-256" }, sign: { name: "ECDSA", hash: "SHA-256" } },
};

export class ServiceClientCredentials {
  readonly #options: ServiceClientOptions;
  readonly #key: CryptoKey;
  readonly #algorithm: Algorithm;
  readonly #kid: string;
  readonly #publicJwk: JsonWebKey;
  readonly #fetch: Fetch;
  readonly #now: () => number;
  #token: string | undefined;
  #expiresAt = 0;
  #pending: Promise<string> | undefined;

  private constructor(options: ServiceClientOptions, key: CryptoKey, algorithm: Algorithm, kid: string, publicJwk: JsonWebKey) {
    this.#options = { ...options, endpoint: options.endpoint.replace(/\/+$/, "") };
    this.#key = key;
    this.#algorithm = algorithm;
    this.#kid = kid;
    this.#publicJwk = publicJwk;
    this.#fetch = options.fetch ?? (globalThis.fetch as unknown as Fetch);
    this.#now = options.now ?? (() => performance.now());
  }

  /** Imports the key (non-extractable) and works out its algorithm and `kid`. */
  static async create(options: ServiceClientOptions): Promise<ServiceClientCredentials> {
    if (!options.clientId.startsWith("scl_")) {
      throw new ServiceClientError("clientId must be a service client id (scl_…).");
    }
    // The public half is derived through an extractable copy that never leaves this function.
    let jwk: JsonWebKey;
    let algorithm: Algorithm;
    if (typeof options.privateKey === "string") {
      const der = pkcs8(options.privateKey);
      const [found, readable] = await ServiceClientCredentials.#readPkcs8(der);
      algorithm = found;
      jwk = readable;
    } else {
      jwk = options.privateKey;
      if (jwk.d === undefined) throw new ServiceClientError("The JWK is a public key: the private key signs.");
      if (jwk.kty === "RSA") algorithm = "RS256";
      else if (jwk.kty === "EC" && jwk.crv === "P-256") algorithm = "ES256";
      else throw new ServiceClientError("The JWK must be an RSA key or an EC key on P-256.");
    }
    const member = (name: "n" | "e" | "x" | "y"): string => {
      const value = jwk[name];
      if (typeof value !== "string") throw new ServiceClientError(`The key lacks its public member ${name}.`);
      return value;
    };
    const publicJwk: JsonWebKey =
      algorithm === "RS256"
        ? { kty: "RSA", n: member("n"), e: member("e") }
        : { kty: "EC", crv: "P-256", x: member("x"), y: member("y") };
    const signing: JsonWebKey = { ...jwk, alg: algorithm };
    delete signing.key_ops;
    const key = await crypto.subtle.importKey("jwk", signing, PARAMETERS[algorithm].import, false, ["sign"]);
    const ownKid = typeof options.privateKey === "string" ? undefined : (options.privateKey as { kid?: string }).kid;
    const kid = options.keyId ?? ownKid ?? (await thumbprint(publicJwk));
    return new ServiceClientCredentials(options, key, algorithm, kid, publicJwk);
  }

  static async #readPkcs8(der: ArrayBuffer): Promise<[Algorithm, JsonWebKey]> {
    for (const algorithm of ["ES256", "RS256"] as const) {
      try {
        const key = await crypto.subtle.importKey("pkcs8", der, PARAMETERS[algorithm].import, true, ["sign"]);
        return [algorithm, await crypto.subtle.exportKey("jwk", key)];
      } catch {
        // not this kind of key: try the next
      }
    }
    throw new ServiceClientError("The PEM key must be an RSA key or an EC key on P-256.");
  }

  /** What the owner registers: `{ keys: [credentials.publicJwk] }`. */
  get publicJwk(): Jwk & { kid: string } {
    return { ...this.#publicJwk, kid: this.#kid, alg: this.#algorithm, use: "sig" };
  }

  toString(): string {
    return `ServiceClientCredentials(${this.#options.clientId}, kid ${this.#kid})`;
  }

  /** For `new MemoryClient({ tokenProvider })`. */
  readonly tokenProvider: TokenProvider = () => this.token();

  /** A fresh signed assertion (a new jti each time: the service takes each once). */
  async assertion(): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const header = { alg: this.#algorithm, typ: "JWT", kid: this.#kid };
    const claims = {
      iss: this.#options.clientId,
      sub: this.#options.clientId,
      aud: `${this.#options.endpoint}/v1/oauth/token`,
      iat: now,
      exp: now + ASSERTION_LIFETIME_S,
      jti: b64url(crypto.getRandomValues(new Uint8Array(16))),
    };
    const input = `${b64url(utf8(JSON.stringify(header)))}.${b64url(utf8(JSON.stringify(claims)))}`;
    // WebCrypto's ECDSA signature is r || s already: the JWS form, no DER to undo.
    const signature = await crypto.subtle.sign(PARAMETERS[this.#algorithm].sign, this.#key, utf8(input));
    return `${input}.${b64url(new Uint8Array(signature))}`;
  }

  /** A workspace token of the client, fetched again when it is within a minute of its end. */
  async token(): Promise<string> {
    if (this.#token !== undefined && this.#now() < this.#expiresAt - SERVICE_CLIENT_REFRESH_MARGIN_MS) {
      return this.#token;
    }
    this.#pending ??= this.#fetchToken().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  async #fetchToken(): Promise<string> {
    const options = this.#options;
    const form = new URLSearchParams({
      grant_type: "client_credentials",
      client_assertion_type: CLIENT_ASSERTION_TYPE,
      client_assertion: await this.assertion(),
    });
    if (options.scope) form.set("scope", options.scope);
    if (options.resource) form.set("resource", options.resource);
    if (options.expiresIn !== undefined) form.set("expires_in", String(options.expiresIn));
    const started = this.#now();
    const { token, expiresIn } = await requestToken(
      this.#fetch,
      `${options.endpoint}/v1/oauth/token`,
      form,
      ServiceClientError,
      { refused: "The token request", answered: "The token endpoint" },
    );
    this.#token = token;
    this.#expiresAt = started + expiresIn * 1000;
    return this.#token;
  }
}
