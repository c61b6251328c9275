// DPoP (RFC 9449): a key pair the client keeps, and a proof signed by it for each request.
//
// The pair is made with WebCrypto (browsers, and Node's globalThis.crypto) with a
// non-extractable private key: script on the page can use it to sign but never read it
// out. A credential bound to the pair (a key created with `dpopJkt`, a token from a sign-in
// made with DPoP) works only with these proofs, so a copy of it alone is useless.

function b64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

const text = (value: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(value);

/** The public half of a P-256 key as a JWK: only the members a thumbprint is made of. */
export interface PublicJwk {
  kty: "EC";
  crv: "P-256";
  x: string;
  y: string;
}

/** RFC 7638: base64url(SHA-256) of the required members in lexical order, no spaces. */
export async function thumbprint(jwk: PublicJwk): Promise<string> {
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return b64url(new Uint8Array(await crypto.subtle.digest("SHA-256", text(canonical))));
}

export class DpopKey {
  readonly jwk: PublicJwk;
  /** What a key-bound API key is created with (`dpopJkt`). */
  readonly thumbprint: string;
  readonly #privateKey: CryptoKey;

  private constructor(privateKey: CryptoKey, jwk: PublicJwk, print: string) {
    this.#privateKey = privateKey;
    this.jwk = jwk;
    this.thumbprint = print;
  }

  /** A new P-256 pair whose private key cannot be exported. */
  static async generate(): Promise<DpopKey> {
    const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, [
      "sign",
      "verify",
    ]);
    return DpopKey.fromKeyPair(pair);
  }

  /** A pair you keep yourself (e.g. in IndexedDB, still non-extractable). */
  // Typed by shape, not as `CryptoKeyPair`: a Node program's types (no DOM library) know no
  // `CryptoKey`; a WebCrypto pair is what it takes.
  static async fromKeyPair(pair: { publicKey: object; privateKey: object }): Promise<DpopKey> {
    const exported = await crypto.subtle.exportKey("jwk", pair.publicKey as CryptoKey);
    if (exported.kty !== "EC" || exported.crv !== "P-256" || !exported.x || !exported.y) {
      throw new TypeError("A DPoP key must be an ECDSA P-256 key pair.");
    }
    const jwk: PublicJwk = { kty: "EC", crv: "P-256", x: exported.x, y: exported.y };
    return new DpopKey(pair.privateKey as CryptoKey, jwk, await thumbprint(jwk));
  }

  /**
   * A proof for one request: its method and URL (without query or fragment), the
   * credential's hash (`ath`) when one is sent, the server's nonce when it asked for one.
   */
  async proof(method: string, url: string, credential?: string, nonce?: string): Promise<string> {
    const target = new URL(url);
    const claims: Record<string, unknown> = {
      jti: crypto.randomUUID(),
      htm: method.toUpperCase(),
      htu: `${target.protocol}//${target.host}${target.pathname}`,
      iat: Math.floor(Date.now() / 1000),
    };
    if (credential !== undefined) {
      claims["ath"] = b64url(new Uint8Array(await crypto.subtle.digest("SHA-256", text(credential))));
    }
    if (nonce !== undefined) claims["nonce"] = nonce;
    const header = { typ: "dpop+jwt", alg: "ES256", jwk: this.jwk };
    const input = `${b64url(text(JSON.stringify(header)))}.${b64url(text(JSON.stringify(claims)))}`;
    // WebCrypto's ECDSA signature is r || s, 64 bytes: already the JWS form (RFC 7518 §3.4).
    const signature = await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, this.#privateKey, text(input));
    return `${input}.${b64url(new Uint8Array(signature))}`;
  }
}
