import { expect, test, type Page } from "@playwright/test";
import { e164, freshPhone, hydrated, prod, smsFor } from "./support";

// A shop as deployed (scripts/e2e.sh's second server): dev login off, sign-in codes through the
// SMS gateway's webhook. The journey reads the code from the relay, as the shopper would from
// their phone; the page never shows one.

/** Signs in on the sign-in page with the code the relay got; `sent` checks the page between. */
async function signInThroughSms(page: Page, phone: string, sent?: () => Promise<void>): Promise<void> {
  await page.getByTestId("phone").fill(phone);
  await page.getByTestId("send-code").click();
  await sent?.();
  const code = await smsFor(phone);
  await expect(page.getByTestId("dev-code")).toHaveCount(0);
  await page.getByTestId("code").fill(code);
  await page.getByTestId("sign-in").click();
  await expect(page).toHaveURL(/\/orders$/);
  await expect(page.getByTestId("signed-in-as")).toHaveText(e164(phone));
}

test("a shopper signs in with the code their phone got, in a shop with no development mode", async ({ page }) => {
  await page.goto(`${prod}/login?next=/orders`);
  await hydrated(page);
  await expect(page.getByTestId("dev-mode")).toHaveCount(0);
  await signInThroughSms(page, freshPhone());
  await expect(page.getByTestId("dev-mode")).toHaveCount(0);
  await page.screenshot({ path: "test-results/webhook-sign-in.png", fullPage: true });
});

test.describe("without JavaScript", () => {
  test.use({ javaScriptEnabled: false });

  test("the sign-in forms work with the code from the SMS, and no code is in the page's address", async ({ page }) => {
    await page.goto(`${prod}/login?next=/orders`);
    await signInThroughSms(page, freshPhone(), async () => {
      await expect(page).toHaveURL(/\/login\?phone=\d+&sent=1&next=\/orders$/);
    });
    await expect(page.getByTestId("dev-mode")).toHaveCount(0);
  });
});

test("a shop in development mode says so on every page", async ({ page }) => {
  for (const path of ["/", "/login"]) {
    await page.goto(path);
    await expect(page.getByTestId("dev-mode")).toBeVisible();
    await expect(page.getByTestId("dev-mode")).toContainText("Development mode");
  }
});
