import { expect, test } from "@playwright/test";
import { ADMIN_PHONE, apiSignIn, freshPhone, hydrated } from "./support";

test("a non-admin is kept out of the admin console; a visitor is sent to sign in and back", async ({ page }) => {
  await page.goto("/admin");
  await expect(page).toHaveURL(/\/login\?next=\/admin$/);

  await apiSignIn(page.request, freshPhone());
  for (const path of ["/admin", "/admin/vouchers/new"]) {
    const res = await page.goto(path);
    expect(res?.status()).toBe(403);
    await expect(page.getByTestId("forbidden")).toBeVisible();
    await expect(page.getByTestId("console-table")).toHaveCount(0);
    await expect(page.getByTestId("title")).toHaveCount(0);
  }
  await expect(page.getByRole("link", { name: "Console" })).toHaveCount(0);
  await page.screenshot({ path: "test-results/admin-forbidden.png", fullPage: true });
  expect((await page.request.post("/api/admin/vouchers", { data: {} })).status()).toBe(403);

  // Signing in as an admin from the redirect comes back to the console.
  await page.context().clearCookies();
  await page.goto("/admin");
  await expect(page).toHaveURL(/\/login\?next=\/admin$/);
  await hydrated(page);
  await page.getByTestId("phone").fill(ADMIN_PHONE);
  await page.getByTestId("send-code").click();
  const code = (await page.getByTestId("dev-code").locator("strong").textContent()) ?? "";
  await page.getByTestId("code").fill(code);
  await page.getByTestId("sign-in").click();
  await expect(page).toHaveURL(/\/admin$/);
  await expect(page.getByTestId("console-table")).toBeVisible();
});
