import { expect, test } from "@playwright/test";

test("the REST API's docs page renders its OpenAPI document from the shop's own files", async ({ page, baseURL }) => {
  // Answers from anywhere but the shop (its page's policy blocks Redoc's CDN logo before it is
  // fetched; its search worker is a blob of the page's own).
  const elsewhere: string[] = [];
  page.on("response", (r) => {
    const url = r.url();
    if (!url.startsWith(baseURL ?? "") && !url.startsWith("data:") && !url.startsWith("blob:")) elsewhere.push(url);
  });
  await page.goto("/api/docs");
  await expect(page.getByRole("heading", { name: /Seckill REST API/ }).first()).toBeVisible({ timeout: 20_000 });
  // An operation and its answers, as the document says.
  await expect(page.getByText("/api/vouchers/{id}/orders").first()).toBeAttached();
  await page.screenshot({ path: "test-results/api-docs.png" });
  expect(elsewhere, "nothing from a CDN or another site").toEqual([]);
});
