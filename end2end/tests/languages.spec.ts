import { Locator, Page, expect, test } from "@playwright/test";
import { ADMIN_PHONE, apiOrder, apiSignIn, createDraw, createVoucher, freshPhone, hydrated, noAxeViolations, title, uiSignIn } from "./support";

// The buy-and-pay and draw journeys in both languages, with JavaScript and without, on a
// phone's screen (design.md decision 44): the browser's language chooses the shop's, and Pay now
// waits wherever an order awaiting payment is shown.
const LANGUAGES = [
  {
    locale: "zh-CN",
    tag: "zh-CN",
    reserved: /^已为您保留：请在 \d\d:\d\d 内支付$/,
    paid: "已支付",
    won: "您中签了",
    zone: "时间均为北京时间（UTC+8）。",
  },
  {
    locale: "en-US",
    tag: "en",
    reserved: /^Reserved for you: pay within \d\d:\d\d$/,
    paid: "Paid",
    won: "You won",
    zone: "Times are Beijing time (UTC+8).",
  },
];

/** Waits for `what`: a live page shows it by itself (`live`); otherwise the page is reloaded
 * until it does (a page without JavaScript, or "My orders", which lists orders as they were
 * when it was rendered, does not change by itself once an order is written). */
async function untilShown(page: Page, what: Locator, live: boolean): Promise<void> {
  if (live) {
    await expect(what).toBeVisible({ timeout: 15_000 });
    return;
  }
  await expect(async () => {
    await page.reload();
    await expect(what).toBeVisible({ timeout: 500 });
  }).toPass({ timeout: 15_000 });
}

/** Pays with `pay` (the dev provider approves at once and sends the shopper back). */
async function payAndSeePaid(page: Page, pay: Locator, paid: string): Promise<void> {
  await pay.click();
  await expect(page).toHaveURL(/\/orders\/\d+\?payment=return$/);
  await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", "paid", { timeout: 15_000 });
  await expect(page.getByTestId("order-state")).toHaveText(paid);
}

for (const L of LANGUAGES) {
  for (const js of [true, false]) {
    test.describe(`${L.locale}, JavaScript ${js ? "on" : "off"}`, () => {
      test.use({ locale: L.locale, javaScriptEnabled: js, viewport: { width: 390, height: 844 } });
      // A page without JavaScript refreshes itself while it waits (for the order, the draw):
      // axe runs where the page stays put, with JavaScript.
      const axe = async (page: Page) => {
        if (js) await noAxeViolations(page);
      };
      test.setTimeout(60_000);
      const shot = (name: string) => `test-results/${L.locale}-${js ? "js" : "nojs"}-${name}.png`;

      async function signIn(page: Page): Promise<void> {
        if (js) {
          await uiSignIn(page, freshPhone());
        } else {
          await apiSignIn(page.request, freshPhone());
        }
      }

      test("a shopper buys and pays from the sale page's answer, then pays another order from My orders", async ({ page, request }) => {
        await apiSignIn(request, ADMIN_PHONE);
        const first = await createVoucher(request, { title: title("Pay here"), stock: 3, beginsInSec: -60 });
        const second = await createVoucher(request, { title: title("Pay there"), stock: 3, beginsInSec: -60 });
        await signIn(page);

        await page.goto(`/vouchers/${first}`);
        await expect(page.locator("html")).toHaveAttribute("lang", L.tag);
        await expect(page.getByTestId("zone-note")).toHaveText(L.zone);
        if (js) await hydrated(page);
        await page.getByTestId("buy").click();
        if (!js) {
          // The plain form's answer is the order's page; the sale's page shows the order too.
          await expect(page).toHaveURL(/\/orders\/\d+$/);
          await page.goto(`/vouchers/${first}`);
        }
        const salePay = page.getByTestId("sale-pay");
        await untilShown(page, salePay, js);
        await expect(salePay.getByTestId("pay-countdown")).toHaveText(L.reserved);
        await page.screenshot({ path: shot("sale-pay"), fullPage: true });
        await axe(page);
        await payAndSeePaid(page, salePay.getByTestId("pay"), L.paid);

        await apiOrder(page.request, second);
        await page.goto("/orders");
        const row = page.getByTestId("order-row").filter({ has: page.locator(`[data-testid="row-pay"]`) });
        // Its order may still be queued when the list is rendered: Pay now comes once written.
        await untilShown(page, row, false);
        await expect(row).toHaveCount(1);
        await expect(row.getByTestId("pay-countdown")).toHaveText(L.reserved);
        await page.screenshot({ path: shot("my-orders-pay"), fullPage: true });
        await axe(page);
        await payAndSeePaid(page, row.getByTestId("pay"), L.paid);
        await page.goto("/orders");
        await expect(page.getByTestId("row-pay")).toHaveCount(0);
      });

      test("a shopper enters a draw, wins its unit, and pays from the sale page", async ({ page, request }) => {
        await apiSignIn(request, ADMIN_PHONE);
        const id = await createDraw(request, title("Draw pay"), 1, 8);
        await signIn(page);
        await page.goto(`/vouchers/${id}`);
        await expect(page.locator("html")).toHaveAttribute("lang", L.tag);
        if (js) await hydrated(page);
        await page.getByTestId("enter-draw").click();
        await expect(page.getByTestId("draw")).toHaveAttribute("data-state", "entered", { timeout: 10_000 });
        await page.screenshot({ path: shot("draw-entered"), fullPage: true });
        await axe(page);
        // The only entrant wins the only unit: said live, or by the page's own refresh.
        await expect(page.getByTestId("draw")).toHaveAttribute("data-state", "won", { timeout: 30_000 });
        await expect(page.getByTestId("won")).toContainText(L.won);
        const salePay = page.getByTestId("sale-pay");
        await untilShown(page, salePay, js);
        await expect(salePay.getByTestId("pay-countdown")).toHaveText(L.reserved);
        await page.screenshot({ path: shot("draw-won-pay"), fullPage: true });
        await axe(page);
        await payAndSeePaid(page, salePay.getByTestId("pay"), L.paid);
      });
    });
  }
}
