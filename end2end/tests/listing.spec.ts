import { expect, test } from "@playwright/test";
import { ADMIN_PHONE, apiSignIn, createVoucher, hydrated, title, noAxeViolations } from "./support";

test.use({ timezoneId: "Asia/Shanghai" });

test("listing cards say when each sale opens or ends, live, and an ended sale shows what it sold instead of a bar", async ({ page, request, browser }) => {
  await apiSignIn(request, ADMIN_PHONE);
  const tag = title("Cards");
  const upcoming = await createVoucher(request, { title: `${tag} upcoming`, stock: 3, beginsInSec: 3600, endsInSec: 7200 });
  const onSale = await createVoucher(request, { title: `${tag} on sale`, stock: 3, beginsInSec: -60 });
  const ending = await createVoucher(request, { title: `${tag} ending`, stock: 2, beginsInSec: -60, endsInSec: 6 });
  const card = (id: number) => page.getByTestId("voucher-card").filter({ has: page.locator(`a[href="/vouchers/${id}"]`) });

  await page.goto("/");
  await hydrated(page);
  await expect(card(upcoming).getByTestId("card-opens")).toBeVisible();
  await expect(card(upcoming).getByTestId("card-opens")).toHaveText(/^Opens in (59:\d\d|01:00:0\d) · \d{1,2} [A-Z][a-z]{2}, \d\d:\d\d$/);
  await expect(card(upcoming).getByTestId("card-ends")).toBeHidden();
  await expect(card(onSale).getByTestId("card-ends")).toHaveText(/^Ends in \d\d:\d\d · \d{1,2} [A-Z][a-z]{2}, \d\d:\d\d$/);
  await expect(card(onSale).getByTestId("card-opens")).toBeHidden();

  // A visitor learns on the card that buying needs an account, and comes back to the sale.
  await expect(card(onSale).getByTestId("card-sign-in")).toHaveAttribute("href", `/login?next=/vouchers/${onSale}`);
  await expect(card(upcoming).getByTestId("card-sign-in")).toBeVisible();

  // The countdown moves by itself.
  const before = await card(onSale).getByTestId("card-ends").textContent();
  await expect(card(onSale).getByTestId("card-ends")).not.toHaveText(before ?? "", { timeout: 3_000 });

  // The short sale ends while the page is open: badge, line and bar change together.
  await expect(card(ending)).toHaveAttribute("data-status", "on_sale");
  await expect(card(ending)).toHaveAttribute("data-status", "ended", { timeout: 10_000 });
  await expect(card(ending).getByTestId("ended-summary")).toHaveText("Sale ended · 0 of 2 sold");
  await expect(card(ending).locator(".stock-bar")).toHaveCount(0);
  await expect(card(ending).getByTestId("card-ends")).toBeHidden();
  await expect(card(ending).locator(".badge")).toHaveText("Ended");
  await expect(card(ending).getByTestId("card-sign-in")).toBeHidden();
  await page.screenshot({ path: "test-results/listing.png", fullPage: true });
  await noAxeViolations(page);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: "test-results/listing-390.png", fullPage: true });

  // Without JavaScript the server renders the same cards (times in the shop's zone).
  const nojs = await browser.newContext({ javaScriptEnabled: false, baseURL: new URL(page.url()).origin });
  const plain = await nojs.newPage();
  await plain.goto("/");
  const plainCard = (id: number) => plain.getByTestId("voucher-card").filter({ has: plain.locator(`a[href="/vouchers/${id}"]`) });
  await expect(plainCard(ending).getByTestId("ended-summary")).toHaveText("Sale ended · 0 of 2 sold");
  await expect(plainCard(upcoming).getByTestId("card-opens")).toHaveText(/^Opens in .* · \d{1,2} [A-Z][a-z]{2}, \d\d:\d\d$/);
  await nojs.close();

  // Signed in, the cards have no sign-in link.
  await apiSignIn(page.request, ADMIN_PHONE);
  await page.reload();
  await hydrated(page);
  await expect(card(onSale).getByTestId("card-ends")).toBeVisible();
  await expect(card(onSale).getByTestId("card-sign-in")).toHaveCount(0);
});
