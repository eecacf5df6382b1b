import { expect, test } from "@playwright/test";
import { ADMIN_PHONE, apiOrder, apiSignIn, createVoucher, freshPhone, hydrated, title, uiSignIn } from "./support";

test("a buy from a page opened before the shopper bought elsewhere is answered with their order", async ({ page, request }) => {
  await apiSignIn(request, ADMIN_PHONE);
  const id = await createVoucher(request, { title: title("Once each"), stock: 5, beginsInSec: -60 });

  await uiSignIn(page, freshPhone());
  await page.goto(`/vouchers/${id}`);
  await hydrated(page);
  await expect(page.getByTestId("buy")).toBeEnabled();
  // The same shopper buys in another tab (the page's request context shares its session).
  const orderId = await apiOrder(page.request, id);

  await page.getByTestId("buy").click();
  await expect(page.getByTestId("buy-error")).toHaveAttribute("data-code", "already_bought");
  await expect(page.getByTestId("buy-error")).toContainText("You have already bought this voucher.");
  // The page now knows the order: the button gives way to it, and the refusal links to it.
  await expect(page.getByTestId("buy")).toHaveCount(0);
  await expect(page.getByTestId("bought-order-link")).toHaveAttribute("href", `/orders/${orderId}`);
  await expect(page.getByTestId("your-order-link")).toHaveAttribute("href", `/orders/${orderId}`);
  await page.getByTestId("your-order-link").click();
  await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", "created", { timeout: 10_000 });
  await page.screenshot({ path: "test-results/already-bought.png", fullPage: true });
});
