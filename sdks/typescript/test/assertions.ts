// Small assertions the suites share.

import assert from "node:assert/strict";
import { inspect } from "node:util";

/** The error a promise rejects with, so that the asserts can follow the call. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail("expected the call to fail");
}

/** No secret appears in the error however it is shown: message, stack, inspect or JSON. */
export function assertNoSecret(error: unknown, secrets: readonly string[]): void {
  const shown = [
    String(error),
    error instanceof Error ? (error.stack ?? "") : "",
    inspect(error, { depth: 5 }),
    JSON.stringify(error) ?? "",
  ];
  for (const secret of secrets) {
    assert.ok(secret.length >= 8, "a secret this short proves nothing");
    for (const text of shown) assert.ok(!text.includes(secret), "an error shows a secret");
  }
}
