// The end-to-end run: one local stack for every suite (starting it takes seconds, and Node
// 20's test runner has no global setup), then the suites over real HTTP.

import { after, before } from "node:test";

import { consumerSuite } from "./e2e/consumer.js";
import { dpopSuite } from "./e2e/dpop.js";
import { keySuite } from "./e2e/keys.js";
import { lifecycleSuite } from "./e2e/lifecycle.js";
import { lostAnswerSuite } from "./e2e/lost.js";
import { serviceClientSuite } from "./e2e/service-clients.js";
import { sessionSuite } from "./e2e/session.js";
import { tokenSuite } from "./e2e/tokens.js";
import { workspaceSuite } from "./e2e/workspaces.js";
import { startStack, type Fault, type RunningStack, type StackInfo } from "./stack.js";

let running: RunningStack | undefined;

before(async () => {
  running = await startStack();
});

after(async () => {
  await running?.stop();
});

function stack(): StackInfo {
  if (running === undefined) throw new Error("the local stack is not running");
  return running.info;
}

function arm(fault: Fault | null): void {
  if (running === undefined) throw new Error("the local stack is not running");
  running.arm(fault);
}

keySuite(stack);
tokenSuite(stack);
sessionSuite(stack);
consumerSuite(stack);
workspaceSuite(stack);
lifecycleSuite(stack);
serviceClientSuite(stack);
lostAnswerSuite(stack, arm);
dpopSuite(stack);
