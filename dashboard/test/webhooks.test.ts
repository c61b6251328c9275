// The webhook form (what add and edit send) and how a webhook and its deliveries read.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { ApiError } from "memory-sdk";

import { eventsText, lastResponse, problemText } from "../src/format.js";
import { newWebhookRequest, webhookChanges, type WebhookForm } from "../src/requests.js";

const FORM: WebhookForm = { url: " https://hooks.example.com/memory ", description: "", every: true, events: [] };

describe("the webhook form", () => {
  it("sends every event as [\"*\"], the URL trimmed, and no empty description", () => {
    assert.deepEqual(newWebhookRequest(FORM), { ok: true, value: { url: "https://hooks.example.com/memory", events: ["*"] } });
  });

  it("sends the chosen types and a description once filled in", () => {
    const checked = newWebhookRequest({ ...FORM, every: false, events: ["key.created", "key.revoked"], description: " alerts " });
    assert.deepEqual(checked, {
      ok: true,
      value: { url: "https://hooks.example.com/memory", events: ["key.created", "key.revoked"], description: "alerts" },
    });
  });

  it("refuses no URL, and no type chosen, before a round trip", () => {
    assert.equal(newWebhookRequest({ ...FORM, url: "  " }).ok, false);
    const none = newWebhookRequest({ ...FORM, every: false, events: [] });
    assert.deepEqual(none, { ok: false, problem: "Choose at least one event type, or every event." });
  });

  it("an edit sends only what differs, and nothing is refused as such", () => {
    const current = { url: "https://hooks.example.com/memory", events: ["key.revoked", "key.created"] };
    const same = { ...FORM, every: false, events: ["key.created", "key.revoked"] };
    assert.deepEqual(webhookChanges(current, same), { ok: false, problem: "Nothing to change." });
    assert.deepEqual(webhookChanges(current, { ...same, url: "https://other.example.com/hook" }), {
      ok: true,
      value: { url: "https://other.example.com/hook" },
    });
    assert.deepEqual(webhookChanges(current, FORM), { ok: true, value: { events: ["*"] } });
  });
});

describe("a webhook on the page", () => {
  it("names its events in words, or every event", () => {
    assert.equal(eventsText(["*"]), "Every event");
    assert.equal(eventsText(["key.created", "member.added"]), "Key created, Member added");
  });

  it("shows a delivery's last answer, no answer, or none yet", () => {
    assert.equal(lastResponse({ attempts: 2, lastStatusCode: 500 }), "500");
    assert.equal(lastResponse({ attempts: 1, lastStatusCode: null }), "no answer");
    assert.equal(lastResponse({ attempts: 0, lastStatusCode: null }), "—");
  });

  it("words the service's URL refusal for a person", () => {
    const refused = new ApiError({ status: 400, code: "invalid_webhook", detail: "url must be an https URL with a public host name." });
    assert.equal(problemText(refused), "The URL must be an https URL with a public host name.");
  });
});
