import { expect, test } from "@playwright/test";
import { ADMIN_PHONE, apiSignIn, hydrated, title, uiSignIn, noAxeViolations } from "./support";

// A browser far from the shop's zone: the form's times are the shop's (Beijing), whatever the
// admin's computer says.
test.use({ timezoneId: "America/New_York" });

test("an admin signs in, sees field errors for bad input, creates a voucher priced in yuan in the shop's time to the second, and lands on its confirmed console row", async ({ page }) => {
  await uiSignIn(page, ADMIN_PHONE);
  await page.getByRole("link", { name: "Console" }).click();
  await expect(page).toHaveURL(/\/admin$/);
  await page.getByTestId("new-voucher").click();
  await expect(page).toHaveURL(/\/admin\/vouchers\/new$/);
  await hydrated(page);

  // The zone the times are read in is the shop's, named beside them.
  await expect(page.getByTestId("zone")).toHaveText("(Beijing time (UTC+8))");
  await expect(page.getByTestId("zone-hint")).toHaveText("Times are Beijing time (UTC+8), to the second.");
  // Each choice's radio button sits beside its words, on one line with them.
  const radio = await page.getByTestId("opening-first-come").boundingBox();
  const words = await page.getByText("First come, first served").boundingBox();
  expect(radio && words && radio.x < words.x && Math.abs(radio.y - words.y) < 12).toBeTruthy();
  expect(radio && radio.width < 40).toBeTruthy();
  await expect(page.getByTestId("create")).toHaveText("Create voucher");

  await page.getByTestId("price").fill("-5");
  await page.getByTestId("stock").fill("0");
  await page.getByTestId("create").click();
  await expect(page.getByTestId("error-title")).toHaveText("Title is required");
  // Limits read with separators.
  await expect(page.getByTestId("error-price_cents")).toHaveText("Price must be between ¥0.00 and ¥1,000,000.00");
  await expect(page.getByTestId("error-stock")).toHaveText("Stock must be between 1 and 10,000,000");

  // A title over the limit is not cut short by the form: the rule's message says why.
  const long = "T".repeat(101);
  await page.getByTestId("title").fill(long);
  await expect(page.getByTestId("title")).toHaveValue(long);
  await page.getByTestId("create").click();
  await expect(page.getByTestId("error-title")).toHaveText("Title must be at most 100 characters");
  await expect(page.getByTestId("title")).toHaveAttribute("aria-invalid", "true");
  await expect(page.getByTestId("title")).toHaveAttribute("aria-describedby", "error-title");
  await expect(page.getByTestId("error-price_cents")).toBeVisible();
  await expect(page.getByTestId("error-stock")).toBeVisible();
  await expect(page.getByTestId("error-begins_at")).toHaveText("Opening time is required");
  await page.screenshot({ path: "test-results/admin-field-errors.png", fullPage: true });
  await noAxeViolations(page);

  const name = title("Admin-made");
  await page.getByTestId("title").fill(name);
  await page.getByTestId("description").fill("Made in the browser");
  await page.getByTestId("price").fill("9.90");
  await page.getByTestId("stock").fill("5");
  await page.getByTestId("begins").fill("2030-06-01T10:00:30");
  await page.getByTestId("ends").fill("2030-06-01T12:00:00");
  await page.getByTestId("create").click();

  // The console confirms the new voucher and marks its row.
  await expect(page).toHaveURL(/\/admin\?created=\d+$/);
  const id = new URL(page.url()).searchParams.get("created");
  await expect(page.getByTestId("created-notice")).toContainText(`Voucher “${name}” created: 5 units`);
  const row = page.getByTestId("console-row").filter({ hasText: name });
  await expect(row).toHaveAttribute("data-created", "true");
  await expect(row.getByTestId("count-redis")).toHaveText("5");
  await expect(row.getByTestId("count-written")).toHaveText("0");
  await page.screenshot({ path: "test-results/admin-created.png", fullPage: true });

  // 10:00:30 in Beijing (UTC+8) is stored as 02:00:30 UTC, and shown back in Beijing time; ¥9.90
  // is stored as 990 fen.
  const stored = await (await page.request.get(`/api/vouchers/${id}`)).json();
  expect(Date.parse(stored.begins_at)).toBe(Date.parse("2030-06-01T02:00:30Z"));
  expect(Date.parse(stored.ends_at)).toBe(Date.parse("2030-06-01T04:00:00Z"));
  expect(stored.stock).toBe(5);
  expect(stored.price_cents).toBe(990);
  await page.getByTestId("created-link").click();
  await expect(page).toHaveURL(new RegExp(`/vouchers/${id}$`));
  await expect(page.getByRole("heading", { name })).toBeVisible();
  await expect(page.locator("time").first()).toHaveText("1 Jun 2030, 10:00");
  await expect(page.getByTestId("zone-note")).toHaveText("Times are Beijing time (UTC+8).");
});

test.describe("without JavaScript", () => {
  test.use({ javaScriptEnabled: false });

  test("the form reads times in the shop's zone, posts, and lands on the confirmed console row", async ({ page }) => {
    await apiSignIn(page.request, ADMIN_PHONE);
    await page.goto("/admin/vouchers/new");
    await expect(page.getByTestId("zone")).toHaveText("(Beijing time (UTC+8))");
    await expect(page.getByTestId("zone-hint")).toContainText("Beijing time");
    const name = title("No-script made");
    await page.getByTestId("title").fill(name);
    await page.getByTestId("price").fill("1.00");
    await page.getByTestId("stock").fill("3");
    await page.getByTestId("begins").fill("2030-07-01T10:00:15");
    await page.getByTestId("ends").fill("2030-07-01T11:00:00");
    await page.getByTestId("create").click();
    await expect(page).toHaveURL(/\/admin\?created=\d+$/);
    await expect(page.getByTestId("created-notice")).toContainText(`Voucher “${name}” created: 3 units`);
    const id = new URL(page.url()).searchParams.get("created");
    const stored = await (await page.request.get(`/api/vouchers/${id}`)).json();
    expect(Date.parse(stored.begins_at)).toBe(Date.parse("2030-07-01T02:00:15Z"));
    expect(stored.price_cents).toBe(100);
    await page.screenshot({ path: "test-results/admin-created-nojs.png", fullPage: true });
  });
});
