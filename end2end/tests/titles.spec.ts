import { expect, request as newRequest, test } from "@playwright/test";
import { ADMIN_PHONE, apiOrder, apiSignIn, createVoucher, freshPhone, hydrated, noAxeViolations, title, uiSignIn } from "./support";

test("each page names itself, and an unknown or someone else's order is a real 404", async ({ page, request, baseURL }) => {
  await apiSignIn(request, ADMIN_PHONE);
  const name = title("Named");
  const id = await createVoucher(request, { title: name, stock: 3, beginsInSec: -60 });
  const owner = await newRequest.newContext({ baseURL });
  await apiSignIn(owner, freshPhone());
  const theirs = await apiOrder(owner, id);
  await owner.dispose();

  await uiSignIn(page, freshPhone());
  await page.goto("/");
  await expect(page).toHaveTitle("Flash sales — Seckill");
  const voucher = await page.goto(`/vouchers/${id}`);
  expect(voucher?.status()).toBe(200);
  await expect(page).toHaveTitle(`${name} — Seckill`);

  // Someone else's order answers exactly like an unknown one: 404, "Order not found".
  for (const path of [`/orders/${theirs}`, "/orders/4242424242"]) {
    const res = await page.goto(path);
    expect(res?.status(), path).toBe(404);
    await expect(page).toHaveTitle("Order not found — Seckill");
    await expect(page.getByTestId("order-not-found")).toBeVisible();
    await expect(page.getByTestId("order")).toHaveCount(0);
  }
  await hydrated(page);
  await noAxeViolations(page);
  expect((await page.goto("/vouchers/424242"))?.status()).toBe(404);

  // The shopper's own order is named by its number; at 390 px the pay box still fits.
  const mine = await apiOrder(page.request, id);
  await page.goto(`/orders/${mine}`);
  await expect(page).toHaveTitle(`Order ${mine} — Seckill`);
  await page.setViewportSize({ width: 390, height: 844 });
  await expect(page.getByTestId("pay")).toBeVisible({ timeout: 10_000 });
  const box = await page.getByTestId("pay-box").boundingBox();
  expect(box && box.x >= 0 && box.x + box.width <= 390).toBeTruthy();
  await page.screenshot({ path: "test-results/order-390.png", fullPage: true });
});
