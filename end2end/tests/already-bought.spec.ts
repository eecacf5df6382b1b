import { expect, test } from "@playwright/test";
import { ADMIN_PHONE, apiSignIn, createVoucher, freshPhone, hydrated, title, uiSignIn } from "./support";

test("a second buy of the same voucher is refused as already bought, with a link to the order", async ({ page, request }) => {
  await apiSignIn(request, ADMIN_PHONE);
  const id = await createVoucher(request, { title: title("Once each"), stock: 5, beginsInSec: -60 });

  await uiSignIn(page, freshPhone());
  await page.goto(`/vouchers/${id}`);
  await hydrated(page);
  await page.getByTestId("buy").click();
  await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", "created", { timeout: 10_000 });
  const orderId = await page.getByTestId("order-id").textContent();

  await page.getByTestId("buy").click();
  await expect(page.getByTestId("buy-error")).toHaveAttribute("data-code", "already_bought");
  await expect(page.getByTestId("buy-error")).toContainText("You have already bought this voucher.");
  // The repeated buy learned the order the shopper holds: the refusal leads to it.
  await expect(page.getByTestId("your-order-link")).toHaveAttribute("href", `/orders/${orderId}`);
  await page.getByTestId("your-order-link").click();
  await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", "created");
  await page.screenshot({ path: "test-results/already-bought.png", fullPage: true });
});
