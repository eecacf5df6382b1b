import { execFileSync } from "node:child_process";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { ADMIN_PHONE, apiSignIn, createVoucher, freshPhone, hydrated, title, uiSignIn, noAxeViolations } from "./support";

// The journeys' server writes orders to the project's local PostgreSQL (scripts/services.sh):
// stopping it stalls the worker for real.
const services = path.join(__dirname, "..", "..", "scripts", "services.sh");
const pg = (cmd: "pg-stop" | "pg-start") => {
  const env = { ...process.env };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  execFileSync("bash", [services, cmd], { stdio: "inherit", env });
};

test("while the worker is stalled a queued order says it is taking longer than usual, then is written", async ({ page, request }) => {
  test.setTimeout(60_000);
  await apiSignIn(request, ADMIN_PHONE);
  const id = await createVoucher(request, { title: title("Slow day"), stock: 3, beginsInSec: -60 });
  await uiSignIn(page, freshPhone());
  await page.goto(`/vouchers/${id}`);
  await hydrated(page);
  pg("pg-stop");
  try {
    await page.getByTestId("buy").click();
    await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", "queued");
    await expect(page.getByTestId("order-slow")).toHaveCount(0);
    await expect(page.getByTestId("order-slow")).toContainText("taking longer than usual", { timeout: 15_000 });
    await page.screenshot({ path: "test-results/slow-queue.png", fullPage: true });
    await noAxeViolations(page);
  } finally {
    pg("pg-start");
  }
  await expect(page.getByTestId("order-state")).toHaveAttribute("data-state", "created", { timeout: 20_000 });
  await expect(page.getByTestId("order-slow")).toHaveCount(0);
});
