import { expect, test } from "@playwright/test";
import { ADMIN_PHONE, apiSignIn, createVoucher, freshPhone, hydrated, title, uiSignIn, noAxeViolations } from "./support";

test("a shopper buys and watches queued turn into created, then finds it in my orders", async ({ page, request }) => {
  await apiSignIn(request, ADMIN_PHONE);
  const name = title("Buy me");
  const id = await createVoucher(request, { title: name, stock: 3, beginsInSec: -60 });

  await uiSignIn(page, freshPhone());
  await page.goto(`/vouchers/${id}`);
  await hydrated(page);
  await expect(page.getByTestId("remaining")).toHaveText("3 of 3 left · 0 sold");
  await page.getByTestId("buy").click();

  // The ID comes back at once, with status queued; the page polls until the worker wrote it.
  await expect(page.getByTestId("order-id")).toHaveText(/^\d+$/);
  // Keyboard focus moved to the answer, not back to the page's top.
  await expect(page.getByTestId("order-status")).toBeFocused();
  await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", "queued");
  // One source of truth, at once (the stock is polled only every 2 s): the stock bar counts
  // the unit, and the button gives way to the order.
  await expect(page.getByTestId("remaining")).toHaveText("2 of 3 left · 1 sold", { timeout: 1_000 });
  await expect(page.getByTestId("buy")).toHaveCount(0);
  await expect(page.getByTestId("your-order")).toBeVisible();
  await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", "created", { timeout: 10_000 });
  await expect(page.getByTestId("order-status")).toHaveAttribute("aria-live", "polite");
  await expect(page.getByTestId("remaining")).toHaveText("2 of 3 left · 1 sold", { timeout: 5_000 });
  const orderId = (await page.getByTestId("order-id").textContent()) ?? "";
  await page.screenshot({ path: "test-results/buy.png", fullPage: true });
  await noAxeViolations(page);

  // The purchase is remembered: back on the voucher's page, the order instead of "Buy now".
  await page.reload();
  await hydrated(page);
  await expect(page.getByTestId("your-order")).toHaveAttribute("data-status", "created");
  await expect(page.getByTestId("bought-order-link")).toHaveAttribute("href", `/orders/${orderId}`);
  await expect(page.getByTestId("buy")).toHaveCount(0);
  await page.screenshot({ path: "test-results/bought.png", fullPage: true });

  await page.getByRole("link", { name: "My orders" }).click();
  const row = page.getByTestId("order-row").filter({ hasText: orderId });
  await expect(row).toHaveAttribute("data-status", "created");
  await expect(row).toContainText(name);
  await row.getByRole("link").click();
  await expect(page).toHaveURL(new RegExp(`/orders/${orderId}$`));
  await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", "created");
  await page.screenshot({ path: "test-results/my-order.png", fullPage: true });

  // Signing out ends the session: my orders now asks to sign in first.
  await page.getByTestId("sign-out").click();
  await expect(page.getByTestId("site-header").getByRole("link", { name: "Sign in", exact: true })).toBeVisible();
  await page.goto("/orders");
  await expect(page).toHaveURL(/\/login\?next=\/orders$/);
});
