// The Sessions section: how a sign-in's device reads, from the User-Agent the service recorded.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { deviceName } from "../src/format.js";

describe("a sign-in's device", () => {
  const table: ReadonlyArray<[string, string]> = [
    ["Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", "Chrome on Linux"],
    ["Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36", "Chrome (headless) on Linux"],
    ["Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0", "Edge on Windows"],
    ["Mozilla/5.0 (Macintosh; Intel Mac OS X 14_1) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15", "Safari on macOS"],
    ["Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1", "Safari on iOS"],
    ["Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36", "Chrome on Android"],
    ["Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0", "Firefox on Linux"],
    ["Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 OPR/114.0.0.0", "Opera on Windows"],
    ["memory-sdk-python/0.1.0", "Python SDK"],
    ["curl/8.5.0", "curl"],
    ["node", "node"],
    ["Mozilla/5.0 (X11; Linux x86_64) SomethingNew/1.0", "A browser on Linux"],
  ];

  it("names the browser and system, or the SDK, or the first product", () => {
    for (const [agent, name] of table) assert.equal(deviceName(agent), name, agent);
  });

  it("an unknown or empty User-Agent is an unknown device", () => {
    assert.equal(deviceName(null), "Unknown device");
    assert.equal(deviceName("   "), "Unknown device");
  });
});
