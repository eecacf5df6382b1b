import { expect, test } from "@playwright/test";
import { ADMIN_PHONE, apiSignIn, createVoucher, freshPhone, hydrated, title, uiSignIn, noAxeViolations } from "./support";

test("a shopper cancels: the order says so, the stock bar goes back up and they may buy again", async ({ page, request }) => {
  await apiSignIn(request, ADMIN_PHONE);
  const id = await createVoucher(request, { title: title("Cancel me"), stock: 2, beginsInSec: -60 });
  await uiSignIn(page, freshPhone());
  await page.goto(`/vouchers/${id}`);
  await hydrated(page);
  await page.getByTestId("buy").click();
  await expect(page.getByTestId("remaining")).toHaveText("1 of 2 left · 1 sold", { timeout: 5_000 });
  await page.getByTestId("order-link").click();
  await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", "created", { timeout: 10_000 });

  await page.getByTestId("cancel").click();
  await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", "cancelled");
  await expect(page.getByTestId("order-status")).toContainText("You cancelled this order");
  await expect(page.getByTestId("pay-box")).toHaveCount(0);
  await page.screenshot({ path: "test-results/cancelled.png", fullPage: true });
  await noAxeViolations(page);

  await page.goto(`/vouchers/${id}`);
  await hydrated(page);
  await expect(page.getByTestId("remaining")).toHaveText("2 of 2 left · 0 sold");
  await expect(page.getByTestId("your-order")).toHaveCount(0);
  await expect(page.getByTestId("buy")).toBeEnabled();
  await page.getByTestId("buy").click();
  await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", /queued|created/);
});

test.describe("without JavaScript", () => {
  test.use({ javaScriptEnabled: false });

  test("the Cancel form posts and the order page comes back cancelled", async ({ page, request }) => {
    await apiSignIn(request, ADMIN_PHONE);
    const id = await createVoucher(request, { title: title("Cancel plain"), stock: 2, beginsInSec: -60 });
    // The page's own request context shares its cookies: signed in, no script needed.
    await apiSignIn(page.request, freshPhone());

    await page.goto(`/vouchers/${id}`);
    await page.getByTestId("buy").click();
    await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", "created", { timeout: 10_000 });
    await page.getByTestId("cancel").click();
    await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", "cancelled");
  });
});
