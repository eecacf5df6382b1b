import { expect, test } from "@playwright/test";
import { ADMIN_PHONE, apiSignIn, createVoucher, freshPhone, hydrated, title, uiSignIn } from "./support";

test("a second buy of the same voucher is refused as already bought", async ({ page, request }) => {
  await apiSignIn(request, ADMIN_PHONE);
  const id = await createVoucher(request, { title: title("Once each"), stock: 5, beginsInSec: -60 });

  await uiSignIn(page, freshPhone());
  await page.goto(`/vouchers/${id}`);
  await hydrated(page);
  await page.getByTestId("buy").click();
  await expect(page.getByTestId("order-state")).toHaveText("created", { timeout: 10_000 });

  await page.getByTestId("buy").click();
  await expect(page.getByTestId("buy-error")).toHaveAttribute("data-code", "already_bought");
  await expect(page.getByTestId("buy-error")).toContainText("You have already bought this voucher.");
  await page.screenshot({ path: "test-results/already-bought.png", fullPage: true });
});
