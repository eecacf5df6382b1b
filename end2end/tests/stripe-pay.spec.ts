import { expect, test, type APIRequestContext, type Page } from "@playwright/test";
import { ADMIN_PHONE, freshPhone, hydrated, noAxeViolations, prod, prodApiSignIn, stripe, title } from "./support";

// The shop as deployed (scripts/e2e.sh's second server) takes money through Stripe Checkout,
// here the Stripe stand-in (fakes/): Pay now sends the shopper to its hosted page, paying there
// sends them back to the order, which the signed webhook (or the return's lookup) marks paid.

/** A voucher on sale on the deployed shop, priced 12.50; its ID. */
async function onSale(request: APIRequestContext, name: string): Promise<number> {
  await prodApiSignIn(request, ADMIN_PHONE);
  const now = Date.now();
  const res = await request.post(`${prod}/api/admin/vouchers`, {
    data: {
      title: name, description: "Paid through Stripe", price_cents: 1250, stock: 5,
      begins_at: new Date(now - 60_000).toISOString(), ends_at: new Date(now + 3_600_000).toISOString(),
    },
  });
  expect(res.status(), await res.text()).toBe(201);
  return (await res.json()).id;
}

/** Buys voucher `id` on its page and waits on the order's page until it awaits payment. */
async function buyAndOpenOrder(page: Page, id: number, js: boolean): Promise<void> {
  await page.goto(`${prod}/vouchers/${id}`);
  if (js) {
    await hydrated(page);
  }
  await page.getByTestId("buy").click();
  if (js) {
    await page.getByTestId("order-link").click();
  }
  await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", "created", { timeout: 10_000 });
  await expect(page.getByTestId("dev-mode")).toHaveCount(0);
}

/** On the stand-in's hosted page: the voucher and its price, then Pay. */
async function payOnStripe(page: Page, name: string): Promise<void> {
  await expect(page).toHaveURL(new RegExp(`^${stripe}/pay/cs_test_\\d+$`));
  await expect(page.getByTestId("stripe-item")).toContainText(name);
  await expect(page.getByTestId("stripe-amount")).toHaveText("12.50 CNY");
  await page.getByTestId("stripe-pay").click();
  await expect(page).toHaveURL(new RegExp(`^${prod}/orders/\\d+\\?payment=return$`));
}

test("a shopper pays on Stripe's hosted page and comes back to a paid order", async ({ page, request }) => {
  const name = title("Stripe tea");
  const id = await onSale(request, name);
  await prodApiSignIn(page.request, freshPhone());
  await buyAndOpenOrder(page, id, true);
  await hydrated(page);
  await page.getByTestId("pay").click();
  await payOnStripe(page, name);
  await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", "paid", { timeout: 10_000 });
  await expect(page.getByTestId("pay-box")).toHaveCount(0);
  await page.screenshot({ path: "test-results/stripe-paid.png", fullPage: true });
  await noAxeViolations(page);
  // Back on the order's page later: still paid, and Pay now is gone.
  await page.goto(`${prod}/orders`);
  await expect(page.getByTestId("order-row").first()).toHaveAttribute("data-status", "paid");
});

test.describe("without JavaScript", () => {
  test.use({ javaScriptEnabled: false });

  test("the Pay form goes to Stripe's page and the order page comes back paid", async ({ page, request }) => {
    const name = title("Stripe plain");
    const id = await onSale(request, name);
    await prodApiSignIn(page.request, freshPhone());
    await buyAndOpenOrder(page, id, false);
    await page.getByTestId("pay").click();
    await payOnStripe(page, name);
    // The page reloads itself until the payment is known.
    await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", "paid", { timeout: 10_000 });
  });
});
