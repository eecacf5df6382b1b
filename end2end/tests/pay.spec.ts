import { expect, test } from "@playwright/test";
import { ADMIN_PHONE, apiSignIn, createVoucher, freshPhone, hydrated, title, uiSignIn, noAxeViolations } from "./support";

test("a shopper buys, sees the time left to pay counting down, pays, and my orders says paid", async ({ page, request }) => {
  await apiSignIn(request, ADMIN_PHONE);
  const id = await createVoucher(request, { title: title("Pay me"), stock: 3, beginsInSec: -60 });
  await uiSignIn(page, freshPhone());
  await page.goto(`/vouchers/${id}`);
  await hydrated(page);
  await page.getByTestId("buy").click();
  await page.getByTestId("order-link").click();
  await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", "created", { timeout: 10_000 });
  await expect(page.getByTestId("order-state")).toHaveText("Awaiting payment");
  const countdown = page.getByTestId("pay-countdown");
  await expect(countdown).toHaveText(/^Reserved for you: pay within \d\d:\d\d$/);
  const first = await countdown.textContent();
  await expect(countdown).not.toHaveText(first ?? "", { timeout: 3_000 });
  await page.screenshot({ path: "test-results/pay-before.png", fullPage: true });
  await noAxeViolations(page);

  // The dev provider's "hosted page" approves at once and sends the shopper straight back.
  await page.getByTestId("pay").click();
  await expect(page).toHaveURL(/\/orders\/\d+\?payment=return$/);
  await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", "paid");
  await expect(page.getByTestId("pay-box")).toHaveCount(0);
  await page.reload();
  await expect(page.getByTestId("order-state")).toHaveText("Paid");
  await page.goto("/orders");
  const row = page.getByTestId("order-row").first();
  await expect(row).toHaveAttribute("data-status", "paid");
  await expect(row).toContainText("Paid");
});

test("a shopper whose phone is an hour fast still has the time to pay the server gives", async ({ page, request }) => {
  // The browser's clock runs an hour ahead of the server's (a phone set by hand): the time to
  // pay is counted on the server's clock, so Pay now stays on and the countdown is the order's.
  await page.clock.install({ time: new Date(Date.now() + 60 * 60_000) });
  await apiSignIn(request, ADMIN_PHONE);
  const id = await createVoucher(request, { title: title("Pay fast clock"), stock: 3, beginsInSec: -60 });
  await uiSignIn(page, freshPhone());
  await page.goto(`/vouchers/${id}`);
  await hydrated(page);
  await page.getByTestId("buy").click();
  // On the sale page (its own clock, synced by the stock feed) and on the order's page.
  const onSale = page.getByTestId("sale-pay");
  await expect(onSale.getByTestId("pay-countdown")).toHaveText(/pay within 00:[0-2]\d$/, { timeout: 10_000 });
  await expect(onSale.getByTestId("pay")).toBeEnabled();
  await page.goto("/orders");
  await hydrated(page);
  const row = page.getByTestId("row-pay").first();
  await expect(row.getByTestId("pay-countdown")).toHaveText(/pay within 00:[0-2]\d$/);
  await expect(row.getByTestId("pay")).toBeEnabled();
  await page.getByTestId("order-row").first().locator("a.order-title").click();
  await hydrated(page);
  await expect(page.getByTestId("pay-countdown")).toHaveText(/pay within 00:[0-2]\d$/);
  await page.getByTestId("pay").click();
  await expect(page).toHaveURL(/\/orders\/\d+\?payment=return$/);
  await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", "paid");
});

test.describe("without JavaScript", () => {
  test.use({ javaScriptEnabled: false });

  test("the Pay form posts and the order page comes back paid", async ({ page, request }) => {
    await apiSignIn(request, ADMIN_PHONE);
    const id = await createVoucher(request, { title: title("Pay plain"), stock: 3, beginsInSec: -60 });
    // The page's own request context shares its cookies: signed in, no script needed.
    await apiSignIn(page.request, freshPhone());

    await page.goto(`/vouchers/${id}`);
    await page.getByTestId("buy").click();
    await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", "created", { timeout: 10_000 });
    await expect(page.getByTestId("pay-countdown")).toContainText("Reserved for you: pay within");
    await page.getByTestId("pay").click();
    await expect(page).toHaveURL(/\/orders\/\d+\?payment=return$/);
    await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", "paid");
  });
});
