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
