import { expect, test } from "@playwright/test";
import { e164, freshPhone, hydrated, noAxeViolations } from "./support";

test.describe("without JavaScript", () => {
  test.use({ javaScriptEnabled: false });

  test("a shopper signs in with plain forms and lands where they were going", async ({ page }) => {
    const phone = freshPhone();
    await page.goto("/login?next=/orders");
    await expect(page.getByTestId("site-header")).toHaveAttribute("data-hydrated", "false");
    await page.getByTestId("phone").fill(phone);
    await page.getByTestId("send-code").click();

    // Back on the sign-in page from the server, with the phone kept and the dev code shown.
    await expect(page).toHaveURL(/\/login\?phone=\d+&sent=1&dev_code=\d{6}&next=\/orders$/);
    await expect(page.getByTestId("phone")).toHaveValue(phone);
    const code = (await page.getByTestId("dev-code").locator("strong").textContent()) ?? "";
    expect(code).toMatch(/^\d{6}$/);

    // A wrong code is refused in words, and the page still holds the phone.
    await page.getByTestId("code").fill(code === "000000" ? "111111" : "000000");
    await page.getByTestId("sign-in").click();
    await expect(page.getByTestId("sign-in-error")).toHaveText("The code is wrong or has expired.");
    await expect(page.getByTestId("phone")).toHaveValue(phone);

    await page.getByTestId("code").fill(code);
    await page.getByTestId("sign-in").click();
    await expect(page).toHaveURL(/\/orders$/);
    await expect(page.getByTestId("signed-in-as")).toHaveText(e164(phone));
    await page.screenshot({ path: "test-results/sign-in-nojs.png", fullPage: true });
  });
});

test("stale messages go when what they were about changes", async ({ page }) => {
  await page.goto("/login");
  await hydrated(page);
  // A phone-format error goes as soon as the phone is edited.
  await page.getByTestId("phone").fill("12");
  await page.getByTestId("send-code").click();
  await expect(page.getByTestId("code-error")).toHaveAttribute("data-code", "invalid_phone");
  await page.getByTestId("phone").fill(freshPhone());
  await expect(page.getByTestId("code-error")).toHaveCount(0);

  // "The code is wrong" goes when a new code is sent (and when the code is edited).
  await page.getByTestId("send-code").click();
  await expect(page.getByTestId("dev-code")).toBeVisible();
  await page.getByTestId("code").fill("0000000");
  await page.getByTestId("sign-in").click();
  await expect(page.getByTestId("sign-in-error")).toBeVisible();
  await page.getByTestId("code").fill("1");
  await expect(page.getByTestId("sign-in-error")).toHaveCount(0);
  await page.getByTestId("sign-in").click();
  await expect(page.getByTestId("sign-in-error")).toBeVisible();
  await page.waitForTimeout(150); // past the e2e server's resend window (SECKILL_CODE_RESEND_MS=100)
  await page.getByTestId("send-code").click();
  await expect(page.getByTestId("dev-code")).toBeVisible();
  await expect(page.getByTestId("sign-in-error")).toHaveCount(0);
  await page.screenshot({ path: "test-results/sign-in-stale.png", fullPage: true });
  await noAxeViolations(page);
});
