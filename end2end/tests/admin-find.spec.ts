import { APIRequestContext, expect, Page, test } from "@playwright/test";
import { ADMIN_PHONE, apiSignIn, hydrated, noAxeViolations, title } from "./support";

/** Creates a first-come sale that began at `begins` and ends ten seconds from now; its ID. */
async function pastSale(request: APIRequestContext, name: string, begins: Date): Promise<number> {
  const res = await request.post("/api/admin/vouchers", {
    data: {
      title: name, price_cents: 990, stock: 1,
      begins_at: begins.toISOString(), ends_at: new Date(Date.now() + 10_000).toISOString(),
    },
  });
  expect(res.status(), await res.text()).toBe(201);
  return (await res.json()).id;
}

/** The voucher IDs of the console's rows, in their order. */
async function rowIds(page: Page): Promise<number[]> {
  const ids = await page.getByTestId("console-row").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-voucher") ?? ""));
  return ids.map(Number);
}

test("the console pages through a thousand past sales to the oldest and finds one by title", async ({ page }) => {
  test.setTimeout(180_000);
  await apiSignIn(page.request, ADMIN_PHONE);
  const tag = title("Past sale");
  // A thousand sales of a shop's past, begun in 2020 a minute apart (older than any other
  // journey's), all over within seconds; the 600th is the one to find.
  const ids: number[] = [];
  for (let batch = 0; batch < 40; batch++) {
    ids.push(...(await Promise.all(Array.from({ length: 25 }, (_, j) => {
      const i = batch * 25 + j;
      const name = i === 600 ? `Jade dragon oolong ${tag}` : `${tag} #${i}`;
      return pastSale(page.request, name, new Date(Date.UTC(2020, 0, 1) + i * 60_000));
    }))));
  }
  await page.waitForTimeout(11_000);

  await page.goto("/admin");
  await hydrated(page);
  await page.getByTestId("find-q").fill(tag);
  await page.getByTestId("find-status").selectOption("ended");
  await page.getByTestId("find").click();
  await expect(page).toHaveURL(/\/admin\?q=.+&status=ended$/);
  await expect(page.getByTestId("find-q")).toHaveValue(tag);
  const seen: number[] = [];
  for (let pages = 1; ; pages++) {
    const onPage = await rowIds(page);
    expect(onPage.length).toBeGreaterThan(0);
    seen.push(...onPage);
    const older = page.getByTestId("page-older");
    if ((await older.count()) === 0) {
      expect(pages).toBe(40);
      break;
    }
    await older.click();
    await expect(page).toHaveURL(/cursor=\d+_\d+/);
    await expect.poll(() => rowIds(page)).not.toEqual(onPage);
  }
  // Every one of the thousand once, newest first, the oldest last.
  expect(seen).toEqual([...ids].reverse());
  await page.getByTestId("page-newest").click();
  await expect.poll(() => rowIds(page)).toEqual([...ids].reverse().slice(0, 25));

  // Found by a part of its title, any case, among every sale.
  await page.getByTestId("find-q").fill(`jade DRAGON oolong ${tag}`);
  await page.getByTestId("find-status").selectOption("");
  await page.getByTestId("find").click();
  await expect.poll(() => rowIds(page)).toEqual([ids[600]]);
  await expect(page.getByTestId("page-older")).toHaveCount(0);
  await noAxeViolations(page);
  await page.getByTestId("manage-sale").click();
  await expect(page.getByTestId("manage")).toContainText(`Jade dragon oolong ${tag}`);

  // The home page's ended sales go past the listing's 200, by "Older sales".
  await page.goto("/?status=ended");
  const first = await page.getByTestId("voucher-card").count();
  expect(first).toBe(24);
  await page.getByTestId("page-older").click();
  await expect(page).toHaveURL(/\/\?status=ended&cursor=\d+_\d+$/);
  await expect(page.getByTestId("page-newest")).toBeVisible();
  await expect(page.getByTestId("voucher-card")).toHaveCount(24);
});

test.describe("without JavaScript", () => {
  test.use({ javaScriptEnabled: false });

  test("the console's search is a plain form", async ({ page }) => {
    await apiSignIn(page.request, ADMIN_PHONE);
    const tag = title("Kettle");
    const id = await pastSale(page.request, `Cast iron kettle ${tag}`, new Date(Date.now() - 60_000));
    await page.goto("/admin");
    await page.getByTestId("find-q").fill(`iron kettle ${tag}`);
    await page.getByTestId("find").click();
    await expect(page).toHaveURL(/\/admin\?q=iron\+kettle\+/);
    expect(await rowIds(page)).toEqual([id]);
    await page.getByTestId("find-q").fill(`no such kettle ${tag}`);
    await page.getByTestId("find").click();
    await expect(page.getByTestId("no-vouchers")).toContainText("No sale matches");
  });
});
