import { APIRequestContext, expect, test } from "@playwright/test";
import { ADMIN_PHONE, apiSignIn, e164, freshPhone, hydrated, noAxeViolations, prod, prodApiSignIn, relay, title } from "./support";

/** A sale an hour away on `base`, created by the signed-in admin `request`; its ID. */
async function upcoming(request: APIRequestContext, base: string, name: string): Promise<number> {
  const begins = Date.now() + 3_600_000;
  const res = await request.post(`${base}/api/admin/vouchers`, {
    data: {
      title: name, price_cents: 990, stock: 5,
      begins_at: new Date(begins).toISOString(), ends_at: new Date(begins + 3_600_000).toISOString(),
    },
  });
  expect(res.status(), await res.text()).toBe(201);
  return (await res.json()).id;
}

for (const javaScriptEnabled of [true, false]) {
  test(`a shopper asks to be reminded of an upcoming sale and takes it back (JavaScript ${javaScriptEnabled ? "on" : "off"})`, async ({ browser, request, baseURL }) => {
    await apiSignIn(request, ADMIN_PHONE);
    const id = await upcoming(request, "", title("Reminded"));
    const context = await browser.newContext({ baseURL, javaScriptEnabled });
    const page = await context.newPage();
    await page.goto(`/vouchers/${id}`);
    await expect(page.getByTestId("remind-waiting")).toHaveText("0 waiting for it");
    await expect(page.getByTestId("remind-sign-in")).toHaveAttribute("href", `/login?next=/vouchers/${id}`);
    await apiSignIn(page.request, freshPhone());
    await page.goto(`/vouchers/${id}`);
    if (javaScriptEnabled) await hydrated(page);
    await page.getByTestId("remind-me").click();
    await expect(page).toHaveURL(new RegExp(`/vouchers/${id}$`));
    await expect(page.getByTestId("reminder-set")).toContainText("We'll text you at");
    await expect(page.getByTestId("remind-waiting")).toHaveText("1 waiting for it");
    if (javaScriptEnabled) await noAxeViolations(page);
    await page.getByTestId("remind-cancel").click();
    await expect(page.getByTestId("remind-me")).toBeVisible();
    await expect(page.getByTestId("remind-waiting")).toHaveText("0 waiting for it");
    await context.close();
  });
}

test("the reminder reaches the relay once when an admin brings the start within the lead, and the console counts it", async ({ browser }) => {
  const admin = await browser.newContext();
  const adminPage = await admin.newPage();
  await prodApiSignIn(adminPage.request, ADMIN_PHONE);
  const name = title("Relay reminded");
  const id = await upcoming(adminPage.request, prod, name);

  const shopper = await browser.newContext();
  const page = await shopper.newPage();
  const phone = freshPhone();
  await prodApiSignIn(page.request, phone);
  await page.goto(`${prod}/vouchers/${id}`);
  await hydrated(page);
  await page.getByTestId("remind-me").click();
  await expect(page.getByTestId("reminder-set")).toBeVisible();

  // Two minutes away: inside the five minutes' lead, so the text goes now.
  const begins = new Date(Date.now() + 120_000);
  begins.setMilliseconds(0);
  const edited = await adminPage.request.patch(`${prod}/api/admin/vouchers/${id}`, { data: { begins_at: begins.toISOString() } });
  expect(edited.status(), await edited.text()).toBe(200);
  let got: Array<Record<string, unknown>> = [];
  await expect
    .poll(async () => {
      got = await (await fetch(`${relay}/reminders?phone=${encodeURIComponent(e164(phone))}`)).json();
      return got.length;
    }, { timeout: 20_000 })
    .toBe(1);
  const m = got[0];
  expect([m.kind, m.voucher_id, m.title, m.lang, m.url]).toEqual(["reminder", id, name, "en", `${prod}/vouchers/${id}`]);
  expect(Date.parse(String(m.at))).toBe(begins.getTime());
  expect(String(m.at)).toMatch(/\+08:00$/);

  await adminPage.goto(`${prod}/admin?q=${encodeURIComponent(name)}`);
  await expect(adminPage.getByTestId("count-reminders")).toHaveText("1 · 1 · 0");
  await admin.close();
  await shopper.close();
});
