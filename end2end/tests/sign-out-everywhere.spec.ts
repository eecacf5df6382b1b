import { expect, test } from "@playwright/test";
import { apiSignIn, e164, freshPhone, hydrated, uiSignIn } from "./support";

test("signing out on every device ends the shopper's other sessions too", async ({ browser }) => {
  const phone = freshPhone();
  const laptop = await browser.newContext();
  const tablet = await browser.newContext({ javaScriptEnabled: false });
  const onLaptop = await laptop.newPage();
  await uiSignIn(onLaptop, phone);
  await onLaptop.waitForTimeout(150); // past the e2e server's resend window
  await apiSignIn(tablet.request, phone);
  const onTablet = await tablet.newPage();
  await onTablet.goto("/orders");
  await expect(onTablet.getByTestId("signed-in-as")).toHaveText(e164(phone));

  await onLaptop.goto("/orders");
  await hydrated(onLaptop);
  await onLaptop.getByTestId("sign-out-everywhere").click();
  await expect(onLaptop).toHaveURL(/\/$/);
  await expect(onLaptop.getByTestId("signed-in-as")).toHaveCount(0);

  // The other device, without JavaScript, is signed out on its next page.
  await onTablet.goto("/");
  await expect(onTablet.getByTestId("signed-in-as")).toHaveCount(0);
  await onTablet.screenshot({ path: "test-results/sign-out-everywhere.png", fullPage: true });
  await laptop.close();
  await tablet.close();
});
