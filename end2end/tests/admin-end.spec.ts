import { expect, test } from "@playwright/test";
import { ADMIN_PHONE, apiSignIn, createVoucher, freshPhone, hydrated, title, uiSignIn, noAxeViolations } from "./support";

test("an admin ends a sale early: a shopper's open page turns to ended without a reload", async ({ page, browser, request, baseURL }) => {
  await apiSignIn(request, ADMIN_PHONE);
  const name = title("Ends early");
  const id = await createVoucher(request, { title: name, stock: 5, beginsInSec: -60 });

  await uiSignIn(page, freshPhone());
  await page.goto(`/vouchers/${id}`);
  await hydrated(page);
  await expect(page.getByTestId("buy")).toHaveText("Buy now");

  const adminContext = await browser.newContext({ baseURL });
  const admin = await adminContext.newPage();
  await uiSignIn(admin, ADMIN_PHONE);
  await admin.goto("/admin");
  await hydrated(admin);
  const row = admin.getByTestId("console-row").filter({ hasText: name });
  await row.getByTestId("manage-sale").click();
  const manage = admin.getByTestId("manage");
  await expect(manage).toContainText(name);
  // Confirmation first: the button is behind a disclosure.
  await expect(admin.getByTestId("confirm-end")).toBeHidden();
  await manage.getByText("End sale").click();
  await admin.getByTestId("confirm-end").click();
  await expect(admin.getByTestId("manage-notice")).toContainText("The sale has ended");
  await expect(row.locator(".badge")).toHaveText("Ended", { timeout: 5_000 });
  await admin.screenshot({ path: "test-results/admin-ended.png", fullPage: true });
  await noAxeViolations(admin);
  await adminContext.close();

  await expect(page.getByTestId("buy")).toHaveText("Sale ended", { timeout: 5_000 });
  await expect(page.getByTestId("buy")).toBeDisabled();
  await expect(page.getByTestId("phase")).toHaveText("Ended");
});

test("an admin adds stock to a sold-out sale from the console", async ({ page, request }) => {
  await apiSignIn(request, ADMIN_PHONE);
  const name = title("Top up");
  const id = await createVoucher(request, { title: name, stock: 1, beginsInSec: -60 });
  expect((await request.post(`/api/vouchers/${id}/orders`)).status()).toBe(202);

  await uiSignIn(page, ADMIN_PHONE);
  await page.goto(`/admin?manage=${id}`);
  await hydrated(page);
  await page.getByTestId("manage").getByText("Add stock").click();
  await page.getByTestId("add-units").fill("4");
  await page.getByTestId("confirm-add").click();
  await expect(page.getByTestId("manage-notice")).toContainText("Stock added");
  await expect(page.getByTestId("manage")).toContainText("4 units left of 5");
  await page.goto(`/vouchers/${id}`);
  await expect(page.getByTestId("remaining")).toHaveText("4 of 5 left · 1 sold");
});
