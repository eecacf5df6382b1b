import { expect, test } from "@playwright/test";
import { apiSignIn, ADMIN_PHONE, createVoucher, freshPhone, hydrated } from "./support";

test("a shopper signs in, buys, and watches queued turn into created; a second buy is refused", async ({ page, request }) => {
  await apiSignIn(request, ADMIN_PHONE);
  const id = await createVoucher(request, { title: `B${Date.now()} buy me`, stock: 3, beginsInSec: -60 });

  await page.goto("/login");
  await hydrated(page);
  await page.getByTestId("phone").fill(freshPhone());
  await page.getByTestId("send-code").click();
  const code = (await page.getByTestId("dev-code").locator("strong").textContent()) ?? "";
  expect(code).toMatch(/^\d{6}$/);
  await page.getByTestId("code").fill(code);
  await page.getByTestId("sign-in").click();
  await expect(page).toHaveURL(/\/$/);

  await page.goto(`/vouchers/${id}`);
  await hydrated(page);
  await page.getByTestId("buy").click();
  await expect(page.getByTestId("order-id")).toHaveText(/^\d+$/);
  await expect(page.getByTestId("order-state")).toHaveText("created", { timeout: 10_000 });
  await page.screenshot({ path: "test-results/bought.png", fullPage: true });

  await page.getByTestId("buy").click();
  await expect(page.getByTestId("buy-error")).toHaveAttribute("data-code", "already_bought");
  await expect(page.getByTestId("buy-error")).toContainText("already bought");
});
