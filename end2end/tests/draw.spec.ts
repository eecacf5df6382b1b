import { expect, test } from "@playwright/test";
import { ADMIN_PHONE, apiSignIn, createDraw, freshPhone, hydrated, noAxeViolations, title, uiSignIn } from "./support";

test("a shopper enters the draw, watches the entrants grow, and learns the outcome at the draw", async ({ page, request, playwright }) => {
  await apiSignIn(request, ADMIN_PHONE);
  const id = await createDraw(request, title("Draw me"), 1, 12);
  await uiSignIn(page, freshPhone());
  await page.goto(`/vouchers/${id}`);
  await hydrated(page);
  await expect(page.getByTestId("countdown")).toContainText("Draw in");
  await expect(page.getByTestId("draw")).toHaveAttribute("data-state", "none");
  await page.getByTestId("enter-draw").click();
  await expect(page.getByTestId("draw")).toHaveAttribute("data-state", "entered");
  await expect(page.getByTestId("entered")).toContainText("You're in the draw (1 entered)");
  // The receipt: the leaf standing for this shopper in the published list, signed by the shop.
  await expect(page.getByTestId("draw-leaf")).toHaveText(/^[0-9a-f]{16}$/);
  const receipt = (await (await page.request.get(`/api/vouchers/${id}/entries/me`)).json()).receipt;
  expect(receipt.leaf).toMatch(/^[0-9a-f]{64}$/);
  expect(receipt.signature).toMatch(/^[0-9a-f]{128}$/);
  await noAxeViolations(page);

  // Another shopper enters elsewhere: the count on this page follows, pushed.
  const other = await playwright.request.newContext({ baseURL: test.info().project.use.baseURL });
  await apiSignIn(other, freshPhone());
  const entered = await other.post(`/api/vouchers/${id}/entries`);
  expect(entered.status()).toBe(202);
  await expect(page.getByTestId("entrants")).toHaveText("2", { timeout: 5_000 });

  // At the draw one of the two wins the single unit; this page says which, without a reload.
  await expect(page.getByTestId("draw")).toHaveAttribute("data-state", /^(won|lost)$/, { timeout: 20_000 });
  const state = await page.getByTestId("draw").getAttribute("data-state");
  const mine = await (await page.request.get(`/api/vouchers/${id}/entries/me`)).json();
  expect(mine.state).toBe(state);
  const theirs = await (await other.get(`/api/vouchers/${id}/entries/me`)).json();
  expect([mine.state, theirs.state].sort()).toEqual(["lost", "won"]);
  if (state === "won") {
    await expect(page.getByTestId("won-order-link")).toHaveAttribute("href", `/orders/${mine.order_id}`);
  } else {
    await expect(page.getByTestId("lost")).toContainText("ranking: 2.");
  }
  const draw = await (await page.request.get(`/api/vouchers/${id}/draw`)).json();
  expect(draw.leaves).toContain(mine.receipt.leaf);
  expect(draw.ranking.map((r: { leaf: string }) => r.leaf)).toContain(mine.receipt.leaf);
  await noAxeViolations(page);
  await other.dispose();

  // Anyone can check it: the page recomputes the root, the seed and the ranking in the browser.
  // This development shop draws without a beacon round, so the ranking rests on its own secret:
  // everything recomputes, and the page says it could not be verified (never "Verified").
  await page.goto(`/vouchers/${id}/draw`);
  await expect(page.getByTestId("draw-check")).toHaveAttribute("data-state", "unchecked", { timeout: 15_000 });
  await expect(page.getByTestId("draw-check-steps")).toContainText("every rank recomputes");
  await expect(page.getByTestId("draw-check-steps")).toContainText("names no beacon round");
  await noAxeViolations(page);
});

test.describe("without JavaScript", () => {
  test.use({ javaScriptEnabled: false });

  test("the Enter form posts, and the page refreshes itself to the outcome", async ({ page, request }) => {
    await apiSignIn(request, ADMIN_PHONE);
    const id = await createDraw(request, title("Draw plain"), 1, 8);
    await apiSignIn(page.request, freshPhone());
    await page.goto(`/vouchers/${id}`);
    await page.getByTestId("enter-draw").click();
    await expect(page).toHaveURL(new RegExp(`/vouchers/${id}$`));
    await expect(page.getByTestId("draw")).toHaveAttribute("data-state", "entered");
    // Alone in the draw: the page reloads itself past the draw and shows the order won.
    await expect(page.getByTestId("won")).toBeVisible({ timeout: 25_000 });
    await expect(page.getByTestId("won-order-link")).toHaveAttribute("href", /^\/orders\/\d+$/);
    // The check page explains the steps without a script.
    await page.goto(`/vouchers/${id}/draw`);
    await expect(page.getByTestId("draw-check")).toContainText("Drawn");
    await expect(page.getByTestId("transcript-link")).toHaveAttribute("href", `/api/vouchers/${id}/draw`);
  });
});

test("an admin creates a draw sale with the form, and shoppers see it is one", async ({ page }) => {
  await uiSignIn(page, ADMIN_PHONE);
  await page.goto("/admin/vouchers/new");
  await hydrated(page);
  const name = title("Form draw");
  await page.getByTestId("title").fill(name);
  await page.getByTestId("price").fill("9.90");
  await page.getByTestId("stock").fill("5");
  await page.getByTestId("begins").fill("2031-06-01T10:00:00");
  await page.getByTestId("ends").fill("2031-06-01T12:00:00");
  await page.getByTestId("opening-draw").check();
  await page.getByTestId("entries-open").fill("2031-06-01T11:00:00");
  await page.getByTestId("create").click();
  await expect(page.getByTestId("error-entries_open_at")).toHaveText("Entries opening must be before the start");
  await noAxeViolations(page);
  await page.getByTestId("entries-open").fill("2031-06-01T09:00:00");
  await page.getByTestId("create").click();
  await expect(page).toHaveURL(/\/admin\?created=\d+$/);
  const id = new URL(page.url()).searchParams.get("created");
  const stored = await (await page.request.get(`/api/vouchers/${id}`)).json();
  expect(stored.opening).toBe("draw");
  expect(Date.parse(stored.entries_open_at)).toBe(Date.parse(stored.begins_at) - 3_600_000);
  await page.goto("/");
  const card = page.getByTestId("voucher-card").filter({ hasText: name });
  await expect(card.getByTestId("draw-badge")).toHaveText("Draw");
  await page.goto(`/vouchers/${id}`);
  await expect(page.getByTestId("draw")).toBeVisible();
  await expect(page.getByTestId("countdown")).toContainText("Draw in");
});
