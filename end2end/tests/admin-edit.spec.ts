import { APIRequestContext, expect, test } from "@playwright/test";
import { ADMIN_PHONE, apiSignIn, hydrated, noAxeViolations, title } from "./support";

/** An upcoming sale on 1 March 2031, 10:00 to 12:00 Beijing time; returns its ID. */
async function upcoming(request: APIRequestContext, name: string): Promise<number> {
  const res = await request.post("/api/admin/vouchers", {
    data: {
      title: name, description: "Playwright voucher", price_cents: 990, stock: 5,
      begins_at: "2031-03-01T02:00:00Z", ends_at: "2031-03-01T04:00:00Z",
    },
  });
  expect(res.status(), await res.text()).toBe(201);
  return (await res.json()).id;
}

for (const javaScriptEnabled of [true, false]) {
  test(`an admin fixes a typo and the start before the sale, and its page shows the fix (JavaScript ${javaScriptEnabled ? "on" : "off"})`, async ({ browser, baseURL }) => {
    const context = await browser.newContext({ baseURL, javaScriptEnabled });
    const page = await context.newPage();
    await apiSignIn(page.request, ADMIN_PHONE);
    const name = title("Sprng tea");
    const id = await upcoming(page.request, name);
    await page.goto(`/vouchers/${id}`);
    await expect(page.getByRole("heading", { name })).toBeVisible();

    await page.goto(`/admin?manage=${id}`);
    if (javaScriptEnabled) await hydrated(page);
    await page.getByTestId("edit-sale").click();
    await expect(page).toHaveURL(new RegExp(`/admin/vouchers/${id}/edit$`));
    if (javaScriptEnabled) await hydrated(page);
    await expect(page.getByTestId("title")).toHaveValue(name);
    await expect(page.getByTestId("price")).toHaveValue("9.90");
    await expect(page.getByTestId("begins")).toHaveValue(/^2031-03-01T10:00(:00)?$/);
    await expect(page.getByTestId("edit-hint")).toContainText("until it opens to shoppers");
    if (javaScriptEnabled) {
      // A mistake in the edit is shown under its field; nothing is saved.
      await page.getByTestId("title").fill(" ");
      await page.getByTestId("save").click();
      await expect(page.getByTestId("error-title")).toHaveText("Title is required");
      await noAxeViolations(page);
    }
    const fixed = name.replace("Sprng", "Spring");
    await page.getByTestId("title").fill(fixed);
    await page.getByTestId("begins").fill("2031-03-01T10:30:00");
    await page.getByTestId("save").click();
    await expect(page).toHaveURL(new RegExp(`/admin\\?manage=${id}&done=edited$`));
    await expect(page.getByTestId("manage-notice")).toContainText("The sale is updated");
    await expect(page.getByTestId("manage")).toContainText(fixed);

    const stored = await (await page.request.get(`/api/vouchers/${id}`)).json();
    expect([stored.title, stored.price_cents, stored.stock]).toEqual([fixed, 990, 5]);
    expect(Date.parse(stored.begins_at)).toBe(Date.parse("2031-03-01T02:30:00Z"));
    // The sale's page, which this browser saw before, shows the fix at once.
    await page.goto(`/vouchers/${id}`);
    await expect(page.getByRole("heading", { name: fixed })).toBeVisible();
    await expect(page.locator("time").first()).toHaveText("1 Mar 2031, 10:30");
    await context.close();
  });
}

test("an edit once the sale has started is refused with the reason, and the panel no longer offers one", async ({ page }) => {
  await apiSignIn(page.request, ADMIN_PHONE);
  const name = title("Starts soon");
  const begins = Date.now() + 4_000;
  const res = await page.request.post("/api/admin/vouchers", {
    data: {
      title: name, price_cents: 990, stock: 5,
      begins_at: new Date(begins).toISOString(), ends_at: new Date(begins + 3_600_000).toISOString(),
    },
  });
  expect(res.status()).toBe(201);
  const id = (await res.json()).id;
  await page.goto(`/admin/vouchers/${id}/edit`);
  await hydrated(page);
  await expect(page.getByTestId("title")).toHaveValue(name);
  // The admin is still typing when the sale opens.
  await page.waitForTimeout(Math.max(0, begins - Date.now()) + 500);
  await page.getByTestId("title").fill("Too late");
  await page.getByTestId("save").click();
  const refused = page.getByTestId("create-error");
  await expect(refused).toHaveAttribute("data-code", "sale_started");
  await expect(refused).toContainText("it can no longer be edited");
  expect((await (await page.request.get(`/api/vouchers/${id}`)).json()).title).toBe(name);
  await page.goto(`/admin?manage=${id}`);
  await expect(page.getByTestId("manage")).toContainText(name);
  await expect(page.getByTestId("edit-sale")).toHaveCount(0);
});
