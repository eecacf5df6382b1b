import { readFile } from "node:fs/promises";
import { expect, test, type APIRequestContext } from "@playwright/test";
import { ADMIN_PHONE, apiSignIn, createVoucher, freshPhone, hydrated, noAxeViolations, title } from "./support";

/** A shopper's paid order on `voucher` (the dev provider approves at once): its ID. */
async function paidOrder(shopper: APIRequestContext, voucher: number): Promise<string> {
  const bought = await shopper.post(`/api/vouchers/${voucher}/orders`);
  expect(bought.status()).toBe(202);
  const order: string = (await bought.json()).order_id;
  await expect(async () => {
    const pay = await shopper.post(`/api/orders/${order}/pay`);
    expect(pay.status(), await pay.text()).toBe(200);
  }).toPass();
  await expect(async () => {
    const o = await (await shopper.get(`/api/orders/${order}?payment=return`)).json();
    expect(o.status).toBe("paid");
  }).toPass();
  return order;
}

for (const javaScriptEnabled of [true, false]) {
  test(`an admin refunds a paid order from the payments page (JavaScript ${javaScriptEnabled ? "on" : "off"})`, async ({ browser, request, playwright, baseURL }) => {
    await apiSignIn(request, ADMIN_PHONE);
    const id = await createVoucher(request, { title: title("Refundable"), stock: 1, beginsInSec: -60 });
    const shopper = await playwright.request.newContext({ baseURL });
    await apiSignIn(shopper, freshPhone());
    const order = await paidOrder(shopper, id);

    const context = await browser.newContext({ baseURL, javaScriptEnabled });
    const admin = await context.newPage();
    // Sign the admin's browser in with the API context's session.
    await context.addCookies(await request.storageState().then((s) => s.cookies));
    await admin.goto("/admin");
    await admin.getByTestId("payments-link").click();
    await expect(admin).toHaveURL(/\/admin\/payments$/);
    await admin.getByTestId("filter-paid").click();
    if (javaScriptEnabled) await hydrated(admin);
    const row = admin.locator(`[data-testid="payment-row"][data-order="${order}"]`);
    await expect(row).toContainText("Paid");
    // Behind a confirmation.
    await expect(row.getByTestId("confirm-refund")).toBeHidden();
    await row.getByText("Refund", { exact: true }).click();
    await row.getByTestId("confirm-refund").click();
    await expect(admin.getByTestId("refund-notice")).toContainText(`Order ${order} refunded`);
    await expect(admin.locator(`[data-testid="payment-row"][data-order="${order}"]`)).toHaveCount(0);
    await admin.getByTestId("filter-refunded").click();
    await expect(admin.locator(`[data-testid="payment-row"][data-order="${order}"]`)).toContainText("Refunded");
    await admin.screenshot({ path: `test-results/admin-payments-js-${javaScriptEnabled}.png`, fullPage: true });
    if (javaScriptEnabled) await noAxeViolations(admin);

    // The shopper's order says so, and the unit is on sale again.
    const o = await (await shopper.get(`/api/orders/${order}`)).json();
    expect([o.status, o.cancelled_by, o.refunded]).toEqual(["cancelled", "shop", true]);
    const v = await (await request.get(`/api/vouchers/${id}`)).json();
    expect(v.remaining).toBe(1);
    await context.close();
    await shopper.dispose();
  });
}

for (const javaScriptEnabled of [true, false]) {
  test(`an admin takes the month's books out as CSV from the payments page (JavaScript ${javaScriptEnabled ? "on" : "off"})`, async ({ browser, request, playwright, baseURL }) => {
    await apiSignIn(request, ADMIN_PHONE);
    const booked = title("Booked, \"quoted\"");
    const id = await createVoucher(request, { title: booked, stock: 1, beginsInSec: -60 });
    const shopper = await playwright.request.newContext({ baseURL });
    await apiSignIn(shopper, freshPhone());
    const order = await paidOrder(shopper, id);

    const context = await browser.newContext({ baseURL, javaScriptEnabled, acceptDownloads: true });
    await context.addCookies(await request.storageState().then((s) => s.cookies));
    const admin = await context.newPage();
    await admin.goto("/admin/payments");
    // This month so far is filled in.
    await expect(admin.getByTestId("books-from")).toHaveValue(/^\d{4}-\d{2}-01$/);
    const download = async (button: string) => {
      const [file] = await Promise.all([admin.waitForEvent("download"), admin.getByTestId(button).click()]);
      expect(file.suggestedFilename()).toMatch(/\.csv$/);
      return (await readFile(await file.path())).toString("utf-8");
    };
    const orders = await download("books-orders");
    const lines = orders.split("\r\n");
    expect(lines[0]).toBe(
      "order_id,admitted_at,written_at,voucher_id,voucher_title,user_id,status,price_minor,price,currency,paid_at,cancelled_at,cancelled_by,payment_state,dispute",
    );
    const row = lines.find((l) => l.startsWith(`${order},`));
    expect(row, orders).toBeDefined();
    // The title's quotes doubled inside a quoted field, the order paid.
    expect(row).toContain(`"${booked.replaceAll('"', '""')}"`);
    expect(row).toMatch(/,paid,/);
    const payments = await download("books-payments");
    expect(payments.split("\r\n")[0]).toMatch(/^payment_id,created_at,/);
    expect(payments).toMatch(new RegExp(`,${order},${id},\\d+,[a-z]+,paid,`));
    // Who took the books out is on the admins' page of actions.
    await admin.goto("/admin");
    await admin.getByTestId("actions-link").click();
    await expect(admin).toHaveURL(/\/admin\/actions$/);
    await expect(admin.getByTestId("action-row").filter({ hasText: "Exported payments" }).first()).toBeVisible();
    await expect(admin.getByTestId("action-row").filter({ hasText: "Exported orders" }).first()).toBeVisible();
    await context.close();
    await shopper.dispose();
  });
}
