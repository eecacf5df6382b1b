import { writeFileSync } from "node:fs";
import { expect, test, type Page } from "@playwright/test";

// How long a phone on a busy network waits before a page answers its taps (scripts/bench.sh
// phone; issue #34): a cold visit (new browser context, empty cache) of the home page and of a
// sale's page, under Chrome's emulation of 150 ms round trips, 1.6 Mbit/s down, 750 kbit/s up
// and a CPU 4x slower. "Interactive" is the moment the page has hydrated (the header's
// data-hydrated turns true: every handler is attached, the countdown ticks, Buy answers without
// a reload). Bytes are what the network moved, compressed, as Chrome counts them.

const RUNS = Number(process.env.PHONE_RUNS ?? 5);
const OUT = process.env.PHONE_OUT ?? "../target/bench/phone.json";

interface Visit {
  interactiveMs: number;
  loadMs: number;
  bytes: number;
  staticBytes: number;
  // Where the time went, in the page's own clock (ms from the navigation's start): the HTML's
  // last byte, the bundle's script and wasm last bytes, and the moment the last island hydrated.
  htmlEnd: number;
  scriptEnd: number;
  wasmEnd: number;
  hydrated: number;
}

async function visit(page: Page, path: string): Promise<Visit> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Network.enable");
  await cdp.send("Network.setCacheDisabled", { cacheDisabled: true });
  await cdp.send("Network.emulateNetworkConditions", {
    offline: false,
    latency: 150,
    downloadThroughput: (1.6 * 1_000_000) / 8,
    uploadThroughput: (750 * 1_000) / 8,
  });
  await cdp.send("Emulation.setCPUThrottlingRate", { rate: 4 });
  const urls = new Map<string, string>();
  let bytes = 0;
  let staticBytes = 0;
  cdp.on("Network.requestWillBeSent", (e) => urls.set(e.requestId, e.request.url));
  cdp.on("Network.loadingFinished", (e) => {
    bytes += e.encodedDataLength;
    if ((urls.get(e.requestId) ?? "").includes("/pkg/")) {
      staticBytes += e.encodedDataLength;
    }
  });
  await page.addInitScript(() => {
    const seen = () => {
      const h = document.querySelector("[data-testid=site-header]");
      if (h?.getAttribute("data-hydrated") === "true" && !(window as any).__hydratedAt) {
        (window as any).__hydratedAt = performance.now();
      }
    };
    new MutationObserver(seen).observe(document, { attributes: true, subtree: true, attributeFilter: ["data-hydrated"] });
  });
  const start = Date.now();
  await page.goto(path, { waitUntil: "commit" });
  await expect(page.getByTestId("site-header")).toHaveAttribute("data-hydrated", "true", { timeout: 120_000 });
  const interactiveMs = Date.now() - start;
  await page.waitForLoadState("load");
  const loadMs = Date.now() - start;
  // Let the last responses' byte counts arrive.
  await page.waitForTimeout(500);
  await cdp.detach();
  const times = await page.evaluate(() => {
    const end = (suffix: string) =>
      Math.round(
        (performance.getEntriesByType("resource") as PerformanceResourceTiming[])
          .filter((e) => new URL(e.name).pathname.endsWith(suffix))
          .reduce((m, e) => Math.max(m, e.responseEnd), 0),
      );
    const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
    return {
      htmlEnd: Math.round(nav.responseEnd),
      scriptEnd: end(".js"),
      wasmEnd: end(".wasm"),
      hydrated: Math.round((window as any).__hydratedAt ?? 0),
    };
  });
  return { interactiveMs, loadMs, bytes, staticBytes, ...times };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

test("a cold visit on an emulated phone network: time to interactive and bytes moved", async ({ browser, request }) => {
  // A sale on now, created as the dev admin (the bench's server runs dev login).
  const sent = await request.post("/api/login/code", { data: { phone: "13800000000" } });
  const { code } = await sent.json();
  expect((await request.post("/api/login", { data: { phone: "13800000000", code } })).status()).toBe(200);
  const now = Date.now();
  const created = await request.post("/api/admin/vouchers", {
    data: {
      title: "Phone bench", description: "A sale page measured on an emulated phone", price_cents: 990, stock: 100,
      begins_at: new Date(now - 60_000).toISOString(), ends_at: new Date(now + 3_600_000).toISOString(),
    },
  });
  expect(created.status()).toBe(201);
  const id = (await created.json()).id;

  const results: Record<string, Visit[]> = { home: [], sale: [] };
  for (let i = 0; i < RUNS; i++) {
    for (const [name, path] of [["home", "/"], ["sale", `/vouchers/${id}`]] as const) {
      const context = await browser.newContext();
      const page = await context.newPage();
      results[name].push(await visit(page, path));
      await context.close();
    }
  }
  const summary = Object.fromEntries(
    Object.entries(results).map(([name, visits]) => [
      name,
      {
        interactive_ms_median: median(visits.map((v) => v.interactiveMs)),
        interactive_ms_min: Math.min(...visits.map((v) => v.interactiveMs)),
        interactive_ms_max: Math.max(...visits.map((v) => v.interactiveMs)),
        load_ms_median: median(visits.map((v) => v.loadMs)),
        bytes_median: median(visits.map((v) => v.bytes)),
        static_bytes_median: median(visits.map((v) => v.staticBytes)),
        html_end_ms_median: median(visits.map((v) => v.htmlEnd)),
        script_end_ms_median: median(visits.map((v) => v.scriptEnd)),
        wasm_end_ms_median: median(visits.map((v) => v.wasmEnd)),
        hydrated_ms_median: median(visits.map((v) => v.hydrated)),
        runs: visits.length,
      },
    ]),
  );
  writeFileSync(OUT, JSON.stringify(summary, null, 2));
  console.log(JSON.stringify(summary, null, 2));
});
