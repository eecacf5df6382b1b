import { expect, test } from "@playwright/test";
import { ADMIN_PHONE, hydrated, title, uiSignIn } from "./support";

// A time zone far from UTC, so a wrong conversion of the form's local times would show.
test.use({ timezoneId: "Asia/Shanghai" });

test("an admin signs in, sees field errors for bad input, and creates a voucher in local time", async ({ page }) => {
  await uiSignIn(page, ADMIN_PHONE);
  await page.getByRole("link", { name: "Console" }).click();
  await expect(page).toHaveURL(/\/admin$/);
  await page.getByTestId("new-voucher").click();
  await expect(page).toHaveURL(/\/admin\/vouchers\/new$/);
  await hydrated(page);

  await page.getByTestId("price").fill("-5");
  await page.getByTestId("stock").fill("0");
  await page.getByTestId("create").click();
  await expect(page.getByTestId("error-title")).toHaveText("Title is required");
  await expect(page.getByTestId("title")).toHaveAttribute("aria-invalid", "true");
  await expect(page.getByTestId("title")).toHaveAttribute("aria-describedby", "error-title");
  await expect(page.getByTestId("error-price_cents")).toBeVisible();
  await expect(page.getByTestId("error-stock")).toBeVisible();
  await expect(page.getByTestId("error-begins_at")).toHaveText("Opening time is required");
  await page.screenshot({ path: "test-results/admin-field-errors.png", fullPage: true });

  const name = title("Admin-made");
  await page.getByTestId("title").fill(name);
  await page.getByTestId("description").fill("Made in the browser");
  await page.getByTestId("price").fill("990");
  await page.getByTestId("stock").fill("5");
  await page.getByTestId("begins").fill("2030-06-01T10:00");
  await page.getByTestId("ends").fill("2030-06-01T12:00");
  await page.getByTestId("create").click();
  await expect(page).toHaveURL(/\/vouchers\/\d+$/);
  await expect(page.getByRole("heading", { name })).toBeVisible();
  await page.screenshot({ path: "test-results/admin-created.png", fullPage: true });

  // 10:00 in Shanghai (UTC+8) is stored as 02:00 UTC, and shown back in local time.
  const id = page.url().split("/").pop();
  const stored = await (await page.request.get(`/api/vouchers/${id}`)).json();
  expect(Date.parse(stored.begins_at)).toBe(Date.parse("2030-06-01T02:00:00Z"));
  expect(Date.parse(stored.ends_at)).toBe(Date.parse("2030-06-01T04:00:00Z"));
  expect(stored.stock).toBe(5);
  await expect(page.locator("time").first()).toHaveText("2030-06-01 10:00:00");

  await page.goto("/admin");
  const row = page.getByTestId("console-row").filter({ hasText: name });
  await expect(row.getByTestId("count-redis")).toHaveText("5");
  await expect(row.getByTestId("count-written")).toHaveText("0");
});
