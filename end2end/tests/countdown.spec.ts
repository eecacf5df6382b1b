import { expect, test } from "@playwright/test";
import { ADMIN_PHONE, apiSignIn, createVoucher, freshPhone, hydrated, title, uiSignIn } from "./support";

test("the countdown turns the buy button on when the sale opens, without a reload, on the server's clock", async ({ page, request }) => {
  await apiSignIn(request, ADMIN_PHONE);
  const id = await createVoucher(request, { title: title("Opens soon"), stock: 5, beginsInSec: 12 });
  // The shopper's computer is an hour fast: the page must count down on the server's clock
  // (read from the browser's, the sale would look over).
  await page.clock.install({ time: Date.now() + 3_600_000 });

  await uiSignIn(page, freshPhone());
  await page.goto(`/vouchers/${id}`);
  await hydrated(page);
  await expect(page.getByTestId("buy")).toBeDisabled();
  await expect(page.getByTestId("buy")).toHaveText("Not open yet");
  await expect(page.getByTestId("phase-announcement")).toHaveText("");
  await expect(page.getByTestId("countdown")).toHaveText(/^Opens in 00:[01]\d$/);
  const first = (await page.getByTestId("countdown").textContent()) ?? "";
  await page.screenshot({ path: "test-results/countdown.png", fullPage: true });
  // The countdown runs down in the page.
  await expect(page.getByTestId("countdown")).not.toHaveText(first, { timeout: 3_000 });

  let navigations = 0;
  page.on("framenavigated", () => navigations++);
  await expect(page.getByTestId("buy")).toBeEnabled({ timeout: 15_000 });
  await expect(page.getByTestId("buy")).toHaveText("Buy now");
  await expect(page.getByTestId("phase")).toHaveText("On sale");
  await expect(page.getByTestId("phase-announcement")).toHaveText("The sale is open: you can buy now.");
  await expect(page.getByTestId("countdown")).toHaveText(/^Closes in /);
  expect(navigations, "no reload").toBe(0);

  await page.getByTestId("buy").click();
  await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", "created", { timeout: 10_000 });
  await page.screenshot({ path: "test-results/countdown-open.png", fullPage: true });
});
