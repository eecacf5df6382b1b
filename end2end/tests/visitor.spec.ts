import { expect, test } from "@playwright/test";
import { ADMIN_PHONE, apiSignIn, createVoucher, freshPhone, hydrated, title, noAxeViolations } from "./support";

test("a signed-out visitor is asked to sign in before buying, and comes back to the voucher", async ({ page, request }) => {
  await apiSignIn(request, ADMIN_PHONE);
  const id = await createVoucher(request, { title: title("Visitor"), stock: 3, beginsInSec: -60 });

  await page.goto(`/vouchers/${id}`);
  await hydrated(page);
  await expect(page.getByTestId("buy")).toHaveCount(0);
  const signIn = page.getByTestId("sign-in-to-buy");
  await expect(signIn).toHaveText("Sign in to buy");
  await expect(signIn).toHaveAttribute("href", `/login?next=/vouchers/${id}`);
  await page.screenshot({ path: "test-results/visitor.png", fullPage: true });
  await noAxeViolations(page);

  await signIn.click();
  await expect(page).toHaveURL(new RegExp(`/login\\?next=/vouchers/${id}$`));
  await hydrated(page);
  const phone = freshPhone();
  await page.getByTestId("phone").fill(phone);
  await page.getByTestId("send-code").click();
  const code = (await page.getByTestId("dev-code").locator("strong").textContent()) ?? "";
  await page.getByTestId("code").fill(code);
  await page.getByTestId("sign-in").click();

  await expect(page).toHaveURL(new RegExp(`/vouchers/${id}$`));
  await expect(page.getByTestId("buy")).toBeEnabled();
  await expect(page.getByTestId("sign-in-to-buy")).toHaveCount(0);
});

test.describe("without JavaScript", () => {
  test.use({ javaScriptEnabled: false });

  test("the visitor's voucher page offers sign-in instead of a buy button", async ({ page, request }) => {
    await apiSignIn(request, ADMIN_PHONE);
    const id = await createVoucher(request, { title: title("Visitor no-JS"), stock: 3, beginsInSec: -60 });
    await page.goto(`/vouchers/${id}`);
    await expect(page.getByTestId("buy")).toHaveCount(0);
    await expect(page.getByTestId("sign-in-to-buy")).toHaveAttribute("href", `/login?next=/vouchers/${id}`);
  });
});
