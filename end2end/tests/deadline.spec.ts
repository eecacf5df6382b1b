import { expect, request as newRequest, test } from "@playwright/test";
import { ADMIN_PHONE, apiOrder, apiSignIn, createVoucher, freshPhone, hydrated, title, uiSignIn } from "./support";

// The journeys' server cancels unpaid orders after SECKILL_PAY_WITHIN_MS (scripts/e2e.sh).
const PAY_WITHIN_SEC = Number(process.env.SECKILL_PAY_WITHIN_MS ?? "20000") / 1000;

test("an unpaid order is cancelled at its deadline and another shopper buys the returned unit", async ({ page, request, baseURL }) => {
  test.setTimeout((PAY_WITHIN_SEC + 40) * 1000);
  await apiSignIn(request, ADMIN_PHONE);
  const id = await createVoucher(request, { title: title("Last one"), stock: 1, beginsInSec: -60 });

  // The first shopper takes the only unit and never pays.
  const first = await newRequest.newContext({ baseURL });
  await apiSignIn(first, freshPhone());
  const order = await apiOrder(first, id);

  // The second shopper finds it sold out, and keeps the page open.
  await uiSignIn(page, freshPhone());
  await page.goto(`/vouchers/${id}`);
  await hydrated(page);
  await expect(page.getByTestId("buy")).toHaveText("Sold out");

  // Past the deadline the sweep cancels the order; the open page sees the unit come back.
  await expect(page.getByTestId("buy")).toHaveText("Buy now", { timeout: (PAY_WITHIN_SEC + 25) * 1000 });
  const status = await first.get(`/api/orders/${order}`);
  expect(await status.json()).toMatchObject({ status: "cancelled", cancelled_by: "deadline" });
  const late = await first.post(`/api/orders/${order}/pay`, { headers: { "Idempotency-Key": "late" } });
  expect(late.status()).toBe(409);
  expect((await late.json()).error).toBe("order_cancelled");
  await first.dispose();

  await page.getByTestId("buy").click();
  await page.getByTestId("order-link").click();
  await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", "created", { timeout: 10_000 });
});
