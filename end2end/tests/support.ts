import AxeBuilder from "@axe-core/playwright";
import { APIRequestContext, expect, Page } from "@playwright/test";

export const ADMIN_PHONE = "13800000000";

/** How the shop shows a phone typed nationally: E.164, in the default country (86). */
export const e164 = (phone: string) => "+86" + phone;

let phones = 0;

/** A phone nobody else in this run uses (two in one millisecond differ too). */
export function freshPhone(): string {
  phones += 1;
  return "139" + String((Date.now() + phones * 7_919) % 100_000_000).padStart(8, "0");
}

/** Signs a request context in through the REST API (dev login returns the code). */
export async function apiSignIn(request: APIRequestContext, phone: string): Promise<void> {
  const sent = await request.post("/api/login/code", { data: { phone } });
  expect(sent.status()).toBe(200);
  const { code } = await sent.json();
  const login = await request.post("/api/login", { data: { phone, code } });
  expect(login.status()).toBe(200);
}

/** Creates a voucher as admin; returns its ID. */
export async function createVoucher(
  request: APIRequestContext,
  v: { title: string; stock: number; beginsInSec: number; endsInSec?: number },
): Promise<number> {
  const now = Date.now();
  const res = await request.post("/api/admin/vouchers", {
    data: {
      title: v.title,
      description: "Playwright voucher",
      price_cents: 990,
      stock: v.stock,
      begins_at: new Date(now + v.beginsInSec * 1000).toISOString(),
      ends_at: new Date(now + (v.endsInSec ?? 3600) * 1000).toISOString(),
    },
  });
  expect(res.status(), await res.text()).toBe(201);
  return (await res.json()).id;
}

/** A draw sale whose entries are open and whose draw is `drawInSec` away; returns its ID. */
export async function createDraw(request: APIRequestContext, name: string, stock: number, drawInSec: number): Promise<number> {
  const now = Date.now();
  const res = await request.post("/api/admin/vouchers", {
    data: {
      title: name,
      description: "Playwright draw",
      price_cents: 990,
      stock,
      begins_at: new Date(now + drawInSec * 1000).toISOString(),
      ends_at: new Date(now + 3_600_000).toISOString(),
      opening: "draw",
      entries_open_at: new Date(now - 1000).toISOString(),
    },
  });
  expect(res.status(), await res.text()).toBe(201);
  return (await res.json()).id;
}

/** Waits until the wasm has hydrated the page. */
export async function hydrated(page: Page): Promise<void> {
  await expect(page.getByTestId("site-header")).toHaveAttribute("data-hydrated", "true");
}

/** Signs in through the sign-in page, as a shopper would. */
export async function uiSignIn(page: Page, phone: string): Promise<void> {
  await page.goto("/login");
  await hydrated(page);
  await page.getByTestId("phone").fill(phone);
  await page.getByTestId("send-code").click();
  const code = (await page.getByTestId("dev-code").locator("strong").textContent()) ?? "";
  expect(code).toMatch(/^\d{6}$/);
  await page.getByTestId("code").fill(code);
  await page.getByTestId("sign-in").click();
  await expect(page.getByTestId("signed-in-as")).toHaveText(e164(phone));
}

/** Buys through the REST API as the signed-in request context; returns the HTTP status. */
export async function apiBuy(request: APIRequestContext, voucherId: number): Promise<number> {
  const res = await request.post(`/api/vouchers/${voucherId}/orders`);
  return res.status();
}

/** A unique title, so journeys can find their own voucher in shared lists. */
export function title(what: string): string {
  return `${what} ${Date.now().toString(36)}`;
}

/** Buys through the REST API as the signed-in request context; returns the order ID. */
export async function apiOrder(request: APIRequestContext, voucherId: number): Promise<string> {
  const res = await request.post(`/api/vouchers/${voucherId}/orders`);
  expect(res.status()).toBe(202);
  return (await res.json()).order_id;
}

/** Runs axe-core on the page as it is now: no violation (WCAG 2.1 A and AA rules). */
export async function noAxeViolations(page: Page): Promise<void> {
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  const found = results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(" | ")}`);
  expect(found, "axe-core violations").toEqual([]);
}

/** The shop started as deployed (scripts/e2e.sh's second server), its SMS relay, and the Stripe
 * stand-in it takes payments through. */
export const prod = process.env.PROD_BASE_URL ?? "http://127.0.0.1:3918";
export const relay = process.env.RELAY_URL ?? "http://127.0.0.1:3919";
export const stripe = process.env.STRIPE_URL ?? "http://127.0.0.1:3920";

/** The code the relay received for `phone` (typed nationally), once it has one. */
export async function smsFor(phone: string): Promise<string> {
  let code = "";
  await expect
    .poll(async () => {
      const r = await fetch(`${relay}/codes?phone=${encodeURIComponent(e164(phone))}`);
      code = r.ok ? await r.text() : "";
      return code;
    })
    .toMatch(/^\d{6}$/);
  return code;
}

/** Signs a request context in on the deployed shop, with the code the relay got. */
export async function prodApiSignIn(request: APIRequestContext, phone: string): Promise<void> {
  const sent = await request.post(`${prod}/api/login/code`, { data: { phone } });
  expect(sent.status(), await sent.text()).toBe(200);
  const code = await smsFor(phone);
  const login = await request.post(`${prod}/api/login`, { data: { phone, code } });
  expect(login.status()).toBe(200);
}
