import { expect, test } from "@playwright/test";
import { ADMIN_PHONE, apiSignIn, freshPhone, hydrated } from "./support";

// A time zone far from UTC, so a wrong conversion of the form's local times would show.
test.use({ timezoneId: "Asia/Shanghai" });

test("an admin creates a voucher in local time and sees field errors for bad input", async ({ page }) => {
  await apiSignIn(page.request, ADMIN_PHONE);
  await page.goto("/admin/vouchers/new");
  await hydrated(page);

  await page.getByTestId("price").fill("-5");
  await page.getByTestId("stock").fill("0");
  await page.getByTestId("create").click();
  await expect(page.getByTestId("error-title")).toContainText("required");
  await expect(page.getByTestId("error-price_cents")).toBeVisible();
  await expect(page.getByTestId("error-stock")).toBeVisible();
  await expect(page.getByTestId("error-begins_at")).toContainText("required");
  await page.screenshot({ path: "test-results/admin-field-errors.png", fullPage: true });

  const title = `A${Date.now()} admin-made`;
  await page.getByTestId("title").fill(title);
  await page.getByTestId("description").fill("Made in the browser");
  await page.getByTestId("price").fill("990");
  await page.getByTestId("stock").fill("5");
  await page.getByTestId("begins").fill("2030-06-01T10:00");
  await page.getByTestId("ends").fill("2030-06-01T12:00");
  await page.getByTestId("create").click();
  await expect(page).toHaveURL(/\/vouchers\/\d+$/);
  await expect(page.getByRole("heading", { name: title })).toBeVisible();
  await page.screenshot({ path: "test-results/admin-created.png", fullPage: true });

  // 10:00 in Shanghai (UTC+8) is stored as 02:00 UTC.
  const id = page.url().split("/").pop();
  const stored = await (await page.request.get(`/api/vouchers/${id}`)).json();
  expect(Date.parse(stored.begins_at)).toBe(Date.parse("2030-06-01T02:00:00Z"));
  expect(Date.parse(stored.ends_at)).toBe(Date.parse("2030-06-01T04:00:00Z"));
  expect(stored.stock).toBe(5);
});

test("a non-admin is kept out of the admin console, an anonymous visitor is sent to sign in", async ({ page }) => {
  await page.goto("/admin/vouchers/new");
  await expect(page).toHaveURL(/\/login$/);

  await apiSignIn(page.request, freshPhone());
  await page.goto("/admin/vouchers/new");
  await expect(page.getByTestId("forbidden")).toBeVisible();
  await expect(page.getByTestId("title")).toHaveCount(0);
  await page.screenshot({ path: "test-results/admin-forbidden.png", fullPage: true });
});
