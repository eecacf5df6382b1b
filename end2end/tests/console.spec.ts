import { expect, request as newRequest, test } from "@playwright/test";
import { ADMIN_PHONE, apiBuy, apiSignIn, createVoucher, freshPhone, hydrated, title, noAxeViolations } from "./support";

test("the console shows each voucher's counts live and charts its sales", async ({ page, baseURL }) => {
  await apiSignIn(page.request, ADMIN_PHONE);
  const name = title("Charted");
  const id = await createVoucher(page.request, { title: name, stock: 10, beginsInSec: -60 });
  await page.goto(`/admin?chart=${id}`);
  await hydrated(page);
  const row = page.locator(`[data-testid=console-row][data-voucher="${id}"]`);
  await expect(row.getByTestId("count-redis")).toHaveText("10");
  await expect(row.getByTestId("count-written")).toHaveText("0");
  await expect(page.getByTestId("no-sales")).toBeVisible();

  // Three shoppers buy while the console is open: it catches up without a reload.
  for (let i = 0; i < 3; i++) {
    const shopper = await newRequest.newContext({ baseURL });
    await apiSignIn(shopper, freshPhone());
    expect(await apiBuy(shopper, id)).toBe(202);
    await shopper.dispose();
  }
  await expect(row.getByTestId("count-written")).toHaveText("3", { timeout: 10_000 });
  await expect(row.getByTestId("count-redis")).toHaveText("7");
  await expect(row.getByTestId("count-queued")).toHaveText("0");
  await expect(row.getByTestId("count-failed")).toHaveText("0");
  await expect(row.getByTestId("count-dead")).toHaveText("0");
  const chart = page.getByTestId("sales-chart");
  await expect(chart).toHaveAttribute("data-voucher", String(id));
  await expect(page.getByTestId("chart-summary")).toHaveAttribute("data-total", "3", { timeout: 5_000 });
  const counts = await page.getByTestId("chart-bar").evaluateAll((bars) =>
    bars.map((b) => Number(b.getAttribute("data-count"))));
  expect(counts.reduce((a, b) => a + b, 0)).toBe(3);
  // Counts read as words: "1 order", "3 orders", never "1 orders".
  await expect(page.getByTestId("chart-summary")).toContainText("3 orders written");
  const labels = await page.getByTestId("chart-bar").evaluateAll((bars) =>
    bars.map((b) => [Number(b.getAttribute("data-count")), b.querySelector("title")?.textContent]));
  for (const [n, label] of labels) {
    expect(label).toBe(n === 1 ? "1 order" : `${n} orders`);
  }
  await page.screenshot({ path: "test-results/console.png", fullPage: true });
  await noAxeViolations(page);

  await page.setViewportSize({ width: 390, height: 844 });
  // On a phone the key counts are on screen without sideways scrolling...
  const written = row.getByTestId("count-written");
  await expect(written).toContainText("3");
  const box = await written.boundingBox();
  expect(box && box.x >= 0 && box.x + box.width <= 390).toBeTruthy();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  await expect(written).toHaveCSS("display", "flex");
  // ...and no chart label is drawn below a readable size: the in-drawing numbers give way to
  // the summary line, which stays.
  await expect(page.locator("svg.chart .tick").first()).toBeHidden();
  await expect(page.getByTestId("chart-summary")).toBeVisible();
  const legendPx = await page.locator(".chart-legend").evaluate((e) => parseFloat(getComputedStyle(e).fontSize));
  expect(legendPx).toBeGreaterThanOrEqual(12);
  await page.screenshot({ path: "test-results/console-390.png", fullPage: true });
  await noAxeViolations(page);
});
