import { expect, test } from "@playwright/test";
import { ADMIN_PHONE, apiBuy, apiSignIn, createVoucher, freshPhone, title } from "./support";

test.use({ javaScriptEnabled: false });

test("without JavaScript the buy form posts, the order page refreshes itself until created", async ({ page, request }) => {
  await apiSignIn(request, ADMIN_PHONE);
  const id = await createVoucher(request, { title: title("No script"), stock: 2, beginsInSec: -60 });

  await apiSignIn(page.request, freshPhone());
  await page.goto(`/vouchers/${id}`);
  await expect(page.getByTestId("site-header")).toHaveAttribute("data-hydrated", "false");
  await page.getByTestId("buy").click();

  await expect(page).toHaveURL(/\/orders\/\d+$/);
  const orderPath = new URL(page.url()).pathname;
  await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", /queued|created/);
  await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", "created", { timeout: 10_000 });
  await page.screenshot({ path: "test-results/nojs-order.png", fullPage: true });

  // The voucher's page, rendered on the server, remembers the purchase.
  await page.goto(`/vouchers/${id}`);
  await expect(page.getByTestId("your-order")).toHaveAttribute("data-status", "created");
  await expect(page.getByTestId("bought-order-link")).toHaveAttribute("href", orderPath);
  await expect(page.getByTestId("buy")).toHaveCount(0);

  // Another shopper opens the page while one unit is left; someone else takes it before the
  // click: the refusal comes back to the page, in words.
  await apiSignIn(page.request, freshPhone());
  await page.goto(`/vouchers/${id}`);
  await apiBuy(request, id);
  await page.getByTestId("buy").click();
  await expect(page).toHaveURL(new RegExp(`/vouchers/${id}`));
  await expect(page.getByTestId("buy-error")).toHaveAttribute("data-code", "sold_out");
  await expect(page.getByTestId("buy-error")).toContainText("Sold out");
  await page.screenshot({ path: "test-results/nojs-refused.png", fullPage: true });
});
