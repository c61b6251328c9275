// A key's usage: requests by day (the last 7 days) and by hour (the last 24 hours), drawn as
// bars whose numbers are text in the same table (the chart and its text equivalent are one),
// and its daily quota, with whether today's is used up.

import type { ApiKey, KeyUsage } from "memory-sdk";

import type { Context } from "../context.js";
import { infoDialog } from "../dialogs.js";
import { errorArea, h, replace } from "../dom.js";
import { problemText } from "../format.js";
import { MAX_REQUESTS_PER_DAY } from "../requests.js";

export const QUOTA_HINT = "Requests a day (UTC), 1 to 10,000,000; once used, requests are refused until midnight UTC. Empty: no quota.";

export function quotaInput(): HTMLInputElement {
  return h("input", { type: "number", min: 1, max: MAX_REQUESTS_PER_DAY, step: 1, inputmode: "numeric", placeholder: "no quota" });
}

const NUMBER = new Intl.NumberFormat("en");
const DAY = new Intl.DateTimeFormat("en", { weekday: "short", month: "short", day: "numeric", timeZone: "UTC" });
const HOUR = new Intl.DateTimeFormat("en", { hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone: "UTC" });

/** The key's quota in words. */
export function quotaText(requestsPerDay: number | null | undefined): string {
  return requestsPerDay === null || requestsPerDay === undefined ? "No daily quota" : `${NUMBER.format(requestsPerDay)} requests a day`;
}

/** True when today's (UTC) bucket has reached the quota: the key is refused until midnight. */
export function quotaUsedUp(days: KeyUsage, requestsPerDay: number | null | undefined, now: number = Date.now()): boolean {
  if (requestsPerDay === null || requestsPerDay === undefined) return false;
  const today = new Date(now).toISOString().slice(0, 10);
  const bucket = days.buckets.find((b) => b.start.slice(0, 10) === today);
  return bucket !== undefined && bucket.requests >= requestsPerDay;
}

function chart(usage: KeyUsage, caption: string, when: (start: string) => string): HTMLElement {
  const most = Math.max(1, ...usage.buckets.map((b) => b.requests));
  const total = usage.buckets.reduce((sum, b) => sum + b.requests, 0);
  return h(
    "table",
    { class: "usage" },
    h("caption", {}, `${caption}: ${NUMBER.format(total)} in all`),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, usage.granularity === "day" ? "Day (UTC)" : "Hour (UTC)"), h("th", { scope: "col" }, "Requests"))),
    h(
      "tbody",
      {},
      ...usage.buckets.map((bucket) => {
        const bar = h("span", { class: "bar", "aria-hidden": "true" });
        // A CSSOM property, which the page's CSP allows (a style attribute it would not).
        bar.style.width = `${(100 * bucket.requests) / most}%`;
        return h(
          "tr",
          {},
          h("th", { scope: "row" }, h("time", { datetime: bucket.start }, when(bucket.start))),
          h("td", {}, h("span", { class: "track" }, bar), h("span", { class: "count" }, NUMBER.format(bucket.requests))),
        );
      }),
    ),
  );
}

export async function showUsage(app: Context, key: ApiKey): Promise<void> {
  const errors = errorArea();
  const body = h("div", { class: "usage-body", "aria-busy": "true" }, h("p", {}, "Loading the key's usage…"));
  const load = async (): Promise<void> => {
    errors.clear();
    body.setAttribute("aria-busy", "true");
    try {
      // RFC 3339 as the service reads it: whole seconds.
      const hourFrom = new Date(Date.now() - 23 * 3_600_000).toISOString().replace(/\.\d+Z$/, "Z");
      const [days, hours] = await Promise.all([
        app.call(() => app.client.auth.usage(key.id, { granularity: "day" })),
        app.call(() => app.client.auth.usage(key.id, { granularity: "hour", from: hourFrom })),
      ]);
      const usedUp = quotaUsedUp(days, key.requestsPerDay);
      replace(
        body,
        h("p", { class: "quota" }, h("strong", {}, "Quota: "), quotaText(key.requestsPerDay), "."),
        usedUp
          ? h("p", { class: "warning", "data-quota": "used-up" }, "Today’s quota is used up: requests with this key are refused until midnight UTC. Raise the quota under Edit to let them through.")
          : null,
        chart(days, "Requests by day, the last 7 days", (start) => DAY.format(Date.parse(start))),
        chart(hours, "Requests by hour, the last 24 hours", (start) => HOUR.format(Date.parse(start))),
        h(
          "p",
          { class: "hint" },
          days.complete && hours.complete
            ? "Counts are final."
            : "Counts arrive within 5 minutes of the requests: the latest may still grow.",
        ),
      );
    } catch (error) {
      replace(body);
      errors.show(problemText(error), () => void load());
    } finally {
      body.setAttribute("aria-busy", "false");
    }
  };
  const shown = infoDialog(`Usage of “${key.label}”`, [errors.element, body]);
  void load();
  await shown;
}
