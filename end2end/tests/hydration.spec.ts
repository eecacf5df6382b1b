import { expect, test } from "@playwright/test";
import { apiSignIn, ADMIN_PHONE, createVoucher, hydrated } from "./support";

test("the home page lists vouchers from PostgreSQL and its filters work once hydrated", async ({ page, request }) => {
  await apiSignIn(request, ADMIN_PHONE);
  const tag = `H${Date.now()}`;
  await createVoucher(request, { title: `${tag} open`, stock: 5, beginsInSec: -60 });
  await createVoucher(request, { title: `${tag} later`, stock: 5, beginsInSec: 3600, endsInSec: 7200 });

  await page.goto("/");
  const cards = page.getByTestId("voucher-card").filter({ hasText: tag });
  await expect(cards).toHaveCount(2);
  await hydrated(page);

  // The filter is client-side only: it works only when the wasm runs.
  await page.getByTestId("filter-upcoming").click();
  await expect(cards).toHaveCount(1);
  await expect(cards.first()).toContainText(`${tag} later`);
  await expect(cards.first()).toHaveAttribute("data-status", "upcoming");
  await page.getByTestId("filter-on_sale").click();
  await expect(cards).toHaveCount(1);
  await expect(cards.first()).toContainText(`${tag} open`);
  await page.screenshot({ path: "test-results/home.png", fullPage: true });
});
