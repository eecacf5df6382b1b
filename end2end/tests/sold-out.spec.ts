import { expect, request as newRequest, Route, test } from "@playwright/test";
import { ADMIN_PHONE, apiBuy, apiSignIn, createVoucher, freshPhone, hydrated, title, uiSignIn } from "./support";

test("the last unit goes to someone else: the buy is refused as sold out and the page says so", async ({ page, request, baseURL }) => {
  await apiSignIn(request, ADMIN_PHONE);
  const id = await createVoucher(request, { title: title("Only one"), stock: 1, beginsInSec: -60 });

  await uiSignIn(page, freshPhone());
  // This journey is about the server's refusal: without the sale's stream the page does not
  // learn of the rival's buy before the click (live-stock.spec.ts covers the pushed stock).
  await page.route("**/api/vouchers/*/events", (route) => route.abort());
  await page.goto(`/vouchers/${id}`);
  await hydrated(page);
  await expect(page.getByTestId("remaining")).toHaveText("1 of 1 left · 0 sold");
  await expect(page.getByTestId("buy")).toBeEnabled();
  // Nor its poll (every 2 s): one landing between the rival's buy and the click would turn the
  // button off first (CI hit it). Polls are held, and sent on after the click.
  let holding = true;
  const held: Route[] = [];
  await page.route("**/api/vouchers/*/stock", (route) => (holding ? held.push(route) : route.continue()));

  // Another shopper takes the last unit while this page is open.
  const rival = await newRequest.newContext({ baseURL });
  await apiSignIn(rival, freshPhone());
  expect(await apiBuy(rival, id)).toBe(202);
  await rival.dispose();

  await page.getByTestId("buy").click();
  holding = false;
  await Promise.all(held.map((route) => route.continue()));
  await expect(page.getByTestId("buy-error")).toHaveAttribute("data-code", "sold_out");
  await expect(page.getByTestId("buy-error")).toContainText("Sold out");
  // The refusal has the page ask for the figures at once (without the stream, they are polled
  // only every 2 s): the stock bar, the badge and the button move together.
  await expect(page.getByTestId("remaining")).toHaveText("0 of 1 left · 1 sold", { timeout: 1_000 });
  await expect(page.getByTestId("buy")).toBeDisabled();
  await expect(page.getByTestId("buy")).toHaveText("Sold out");
  await expect(page.getByTestId("phase")).toHaveText("Sold out");
  await page.screenshot({ path: "test-results/sold-out.png", fullPage: true });

  // The home page comes from the page cache, up to SECKILL_PAGE_CACHE_MS (1 s) old (design.md
  // decision 21): the listing says sold out once its rendering is younger than the buy.
  const card = page.getByTestId("voucher-card").filter({ has: page.locator(`a[href="/vouchers/${id}"]`) });
  await expect(async () => {
    await page.goto("/");
    await expect(card).toHaveAttribute("data-status", "sold_out", { timeout: 200 });
  }).toPass({ timeout: 5_000 });
});
