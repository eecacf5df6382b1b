import { expect, Page, test } from "@playwright/test";
import { ADMIN_PHONE, apiSignIn, createVoucher, hydrated, noAxeViolations, title, uiSignIn } from "./support";

const PAGE_SIZE = 24;

/** The voucher IDs of the cards on the page, in their order. */
async function cardIds(page: Page): Promise<number[]> {
  const hrefs = await page.getByTestId("voucher-card").locator("a.voucher-title").evaluateAll((links) =>
    links.map((a) => a.getAttribute("href") ?? ""),
  );
  return hrefs.map((h) => Number(h.replace("/vouchers/", "")));
}

/** One walk of the sales on now, from the first page by "Older sales": the cards of each page
 * and how many pages the listing said it had. */
async function walkOnSale(page: Page): Promise<{ byPage: number[][]; pages: number } | undefined> {
  await page.goto("/?status=on_sale");
  await hydrated(page);
  await expect(page.getByTestId("filter-on_sale")).toHaveAttribute("aria-current", "page");
  await expect(page.getByTestId("page-newer")).toHaveCount(0);
  const byPage: number[][] = [];
  let pages = 0;
  for (let at = 1; ; at++) {
    const ids = await cardIds(page);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.length).toBeLessThanOrEqual(PAGE_SIZE);
    byPage.push(ids);
    const where = (await page.getByTestId("page-at").textContent()) ?? "";
    const m = where.match(/^Page (\d+) of (\d+)$/);
    expect(m, where).not.toBeNull();
    // The listing moved under the walk (a page past the last shows the last): walk again.
    if (Number(m![1]) !== at) return undefined;
    pages = Number(m![2]);
    if (at >= pages) {
      await expect(page.getByTestId("page-older")).toHaveCount(0);
      return { byPage, pages };
    }
    if (ids.length !== PAGE_SIZE) return undefined;
    await page.getByTestId("page-older").click();
    await expect(page).toHaveURL(new RegExp(`/\\?status=on_sale&page=${at + 1}$`));
    await hydrated(page);
  }
}

test("the home page shows its cards a page at a time, the filter kept from page to page, with JavaScript or without", async ({ page, request, browser }) => {
  await apiSignIn(request, ADMIN_PHONE);
  const tag = title("Paged");
  // One more than a page of sales that began two days ago: the listing shows the newest sales
  // first, so these come after any other journey's sale on now, in the order they began (a
  // second apart, the latest first).
  const ours: number[] = [];
  for (let i = 0; i <= PAGE_SIZE; i++) {
    ours.push(await createVoucher(request, { title: `${tag} ${i}`, stock: 1, beginsInSec: -2 * 86_400 + i, endsInSec: 900 }));
  }
  const newestFirst = [...ours].reverse();

  // Walk the sales on now from the first page by "Older sales", as a shopper would. Paging by
  // offset over a live listing shifts when a sale starts or ends during the walk (another
  // journey's sale opening or closing a few seconds from now): such a walk sees a card twice or
  // misses one, as a shopper would. So the walk is made again until one saw the listing hold
  // still (its first page the same before and after, no card twice), and that one is checked.
  let walked: { byPage: number[][]; pages: number } | undefined;
  for (let attempt = 1; attempt <= 5 && !walked; attempt++) {
    const w = await walkOnSale(page);
    await page.goto("/?status=on_sale");
    const still = w !== undefined && JSON.stringify(await cardIds(page)) === JSON.stringify(w.byPage[0]);
    const seenOnce = w !== undefined && new Set(w.byPage.flat()).size === w.byPage.flat().length;
    if (still && seenOnce) walked = w;
    else await page.waitForTimeout(2_000);
  }
  expect(walked, "five walks, each while the listing moved").toBeDefined();
  const { byPage, pages } = walked!;
  await page.goto(pages === 1 ? "/?status=on_sale" : `/?status=on_sale&page=${pages}`);
  await hydrated(page);
  expect(pages).toBeGreaterThanOrEqual(2);
  const seen = byPage.flat();
  // Every sale on one page only; ours all there, in the order they began, the latest first.
  expect(new Set(seen).size).toBe(seen.length);
  expect(seen.filter((id) => ours.includes(id))).toEqual(newestFirst);
  await noAxeViolations(page);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: "test-results/paging-390.png", fullPage: true });

  // Back by "Newer sales", the filter kept; the first page has no `page=`.
  await page.getByTestId("page-newer").click();
  await expect(page).toHaveURL(pages === 2 ? /\/\?status=on_sale$/ : new RegExp(`/\\?status=on_sale&page=${pages - 1}$`));
  await expect(page.getByTestId("page-at")).toHaveText(`Page ${pages - 1} of ${pages}`);

  // A page past the last shows the last; a page that is not a number, the first.
  await page.goto(`/?status=on_sale&page=${pages + 50}`);
  await expect(page.getByTestId("page-at")).toHaveText(`Page ${pages} of ${pages}`);
  await page.goto("/?status=on_sale&page=x");
  await expect(page.getByTestId("page-at")).toHaveText(`Page 1 of ${pages}`);

  // Without JavaScript the pages are the same links and the same cards.
  const oldestAt = byPage.findIndex((ids) => ids.includes(ours[0])) + 1;
  const nojs = await browser.newContext({ javaScriptEnabled: false, baseURL: new URL(page.url()).origin });
  const plain = await nojs.newPage();
  await plain.goto(`/?status=on_sale&page=${oldestAt}`);
  await expect(plain.getByTestId("page-at")).toHaveText(`Page ${oldestAt} of ${pages}`);
  expect(await cardIds(plain)).toContain(ours[0]);
  const [link, to] = oldestAt > 1 ? ["page-newer", oldestAt - 1] : ["page-older", oldestAt + 1];
  await plain.getByTestId(link).click();
  await expect(plain.getByTestId("page-at")).toHaveText(`Page ${to} of ${pages}`);
  await nojs.close();
});

test("the console shows its sales a page at a time by keyset, opens on the page starting at the voucher just created, and its chart links keep the page", async ({ page, request }) => {
  await apiSignIn(request, ADMIN_PHONE);
  const tag = title("Rows");
  // More than a page of the console's 25 rows, begun long ago.
  const ours: number[] = [];
  for (let i = 0; i < 26; i++) {
    ours.push(await createVoucher(request, { title: `${tag} ${i}`, stock: 1, beginsInSec: -3 * 86_400 + i, endsInSec: 900 }));
  }
  await uiSignIn(page, ADMIN_PHONE);
  await page.goto("/admin");
  await hydrated(page);
  await expect(page.getByTestId("console-row")).toHaveCount(25);
  await expect(page.getByTestId("page-older")).toBeVisible();
  await expect(page.getByTestId("page-newest")).toHaveCount(0);

  // The voucher just created (here: the oldest of ours) is on screen: the page starts at its row.
  await page.goto(`/admin?created=${ours[0]}`);
  await hydrated(page);
  await expect(page.getByTestId("created-notice")).toContainText(`${tag} 0`);
  const row = page.locator(`[data-testid="console-row"][data-voucher="${ours[0]}"]`);
  await expect(row).toHaveAttribute("data-created", "true");
  await expect(page.getByTestId("console-row").first()).toHaveAttribute("data-voucher", String(ours[0]));
  await expect(page.getByTestId("page-newest")).toBeVisible();

  // The refresh keeps the page (the figures come back every 2 s).
  await page.waitForTimeout(2_500);
  await expect(row).toBeVisible();

  // The page by "Older sales", then a chart link keeps it; "Newest sales" goes back.
  await page.goto("/admin");
  await page.getByTestId("page-older").click();
  await expect(page).toHaveURL(/\/admin\?cursor=\d+_\d+$/);
  const cursor = new URL(page.url()).searchParams.get("cursor");
  const older = page.getByTestId("console-row").first();
  const id = await older.getAttribute("data-voucher");
  await older.getByTestId("show-chart").click();
  await expect(page).toHaveURL(new RegExp(`/admin\\?cursor=${cursor}&chart=${id}$`));
  await expect(page.getByTestId("console-row").first()).toHaveAttribute("data-voucher", String(id));
  await page.getByTestId("page-newest").click();
  await expect(page).toHaveURL(new RegExp(`/admin\\?chart=${id}$`));
  await expect(page.getByTestId("page-newest")).toHaveCount(0);
  await noAxeViolations(page);
});
