// An independent verifier of our access tokens: jose's remote JWKS and jwtVerify, the way a
// third-party resource server would check them, against the service's served JWKS.
//
//   node verify.mjs <jwks_url> <issuer>  < tokens.json   (a JSON list of tokens on stdin)
//
// Prints a JSON list: {"ok": true, "sub", "kid"} or {"ok": false, "code"} per token.
import { createRemoteJWKSet, jwtVerify } from 'jose';

const [jwksUrl, issuer] = process.argv.slice(2);
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const tokens = JSON.parse(Buffer.concat(chunks).toString('utf8'));

const jwks = createRemoteJWKSet(new URL(jwksUrl));
const results = [];
for (const token of tokens) {
  try {
    const { payload, protectedHeader } = await jwtVerify(token, jwks, {
      issuer,
      audience: issuer,
      algorithms: ['RS256'],
      typ: 'at+jwt',
      requiredClaims: ['iss', 'aud', 'sub', 'iat', 'exp', 'jti'],
    });
    results.push({ ok: true, sub: payload.sub, kid: protectedHeader.kid });
  } catch (error) {
    results.push({ ok: false, code: error.code ?? error.name });
  }
}
console.log(JSON.stringify(results));
