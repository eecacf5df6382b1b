import { expect, test } from "@playwright/test";
import { apiSignIn, ADMIN_PHONE, createVoucher, hydrated } from "./support";

test("the home page lists vouchers from PostgreSQL; its filters are links the server answers, with JavaScript or without", async ({ page, request, browser }) => {
  await apiSignIn(request, ADMIN_PHONE);
  const tag = `H${Date.now()}`;
  await createVoucher(request, { title: `${tag} open`, stock: 5, beginsInSec: -60 });
  await createVoucher(request, { title: `${tag} later`, stock: 5, beginsInSec: 3600, endsInSec: 7200 });

  await page.goto("/");
  const cards = page.getByTestId("voucher-card").filter({ hasText: tag });
  await expect(cards).toHaveCount(2);
  await expect(page.getByTestId("filter-all")).toHaveAttribute("aria-current", "page");
  await hydrated(page);

  await page.getByTestId("filter-upcoming").click();
  await expect(page).toHaveURL(/\/\?status=upcoming$/);
  await expect(cards).toHaveCount(1);
  await expect(cards.first()).toContainText(`${tag} later`);
  await expect(cards.first()).toHaveAttribute("data-status", "upcoming");
  await expect(page.getByTestId("filter-upcoming")).toHaveAttribute("aria-current", "page");
  await expect(page.getByTestId("filter-all")).not.toHaveAttribute("aria-current", "page");
  await page.getByTestId("filter-on_sale").click();
  await expect(cards).toHaveCount(1);
  await expect(cards.first()).toContainText(`${tag} open`);
  await page.screenshot({ path: "test-results/home.png", fullPage: true });

  // The same without JavaScript: the server filters.
  const nojs = await browser.newContext({ javaScriptEnabled: false, baseURL: new URL(page.url()).origin });
  const plain = await nojs.newPage();
  await plain.goto("/");
  const plainCards = plain.getByTestId("voucher-card").filter({ hasText: tag });
  await expect(plainCards).toHaveCount(2);
  await plain.getByTestId("filter-upcoming").click();
  await expect(plain).toHaveURL(/\/\?status=upcoming$/);
  await expect(plainCards).toHaveCount(1);
  await expect(plainCards.first()).toContainText(`${tag} later`);
  // A status the page does not know shows everything, as "All" does.
  await plain.goto("/?status=nonsense");
  await expect(plainCards).toHaveCount(2);
  await expect(plain.getByTestId("filter-all")).toHaveAttribute("aria-current", "page");
  await nojs.close();
});
