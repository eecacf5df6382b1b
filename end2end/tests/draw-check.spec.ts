import { createHash, createHmac } from "node:crypto";
import { expect, Page, test } from "@playwright/test";
import { ADMIN_PHONE, apiSignIn, createDraw, noAxeViolations, title } from "./support";

// "Check this draw" says "Verified" only when every step held, the beacon round included, and
// not once the relay serves another randomness for the round (issue #51). The page of a real
// draw sale is opened; its transcript and the drand relay's answer are served to the browser by
// the journey: a draw made by the rules around drand quicknet's real round 123 (its signature,
// published by drand, verifies against the key the page pins), then the same with the relay
// lying, then with the relay out of reach.

const QUICKNET = "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971";
const ROUND_123_SIGNATURE =
  "b75c69d0b72a5d906e854e808ba7e2accb1542ac355ae486d591aa9d43765482e26cd02df835d3546d23c4b13e0dfc92";
const RELAY = "https://relay.example";
const emitted = (round: number) => 1692803367 + (round - 1) * 3;

const sha = (...parts: (string | Buffer)[]) => {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return h.digest();
};
const hex = (b: Buffer) => b.toString("hex");
const iso = (secs: number) => new Date(secs * 1000).toISOString();

/** RFC 9162's Merkle tree hash, as the shop commits the entries. */
function root(leaves: Buffer[]): Buffer {
  if (leaves.length === 0) return sha();
  if (leaves.length === 1) return sha(Buffer.of(0), leaves[0]);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return sha(Buffer.of(1), root(leaves.slice(0, k)), root(leaves.slice(k)));
}

/** A transcript made by the rules (docs/draws.md): 6 entrants, 2 units, round 123. */
function transcript(voucher: number) {
  const randomness = hex(sha(Buffer.from(ROUND_123_SIGNATURE, "hex")));
  const closed = emitted(123) - 7;
  const committed = sha("the shop's secret");
  const leaves = Array.from({ length: 6 }, (_, i) => sha(`entrant ${i}`)).sort(Buffer.compare);
  const entriesRoot = root(leaves);
  const seed = sha(`seckill-draw-v1:${voucher}:${hex(committed)}:${hex(entriesRoot)}:${randomness}`);
  const ranked = leaves
    .map((leaf) => ({ leaf, key: createHmac("sha256", seed).update(leaf).digest() }))
    .sort((a, b) => Buffer.compare(a.key, b.key) || Buffer.compare(a.leaf, b.leaf));
  return {
    voucher_id: voucher,
    commitment: hex(sha(committed)),
    entries_open_at: iso(closed - 3600),
    closes_at: iso(closed - 1),
    beacon: { url: RELAY, chain_hash: QUICKNET, round: 123 },
    entrants: leaves.length,
    closed_at: iso(closed),
    entries_root: hex(entriesRoot),
    leaves: leaves.map(hex),
    committed_seed: hex(committed),
    randomness,
    seed: hex(seed),
    stock: 2,
    ranking: ranked.map((r, i) => ({ rank: i + 1, leaf: hex(r.leaf), key: hex(r.key) })),
    winners: ranked.slice(0, 2).map((r) => hex(r.leaf)),
    moves: [],
    drawn_at: iso(closed + 10),
  };
}

type Relay = "honest" | "lying" | "down";

/** Opens the draw's check page with its transcript and the relay's answer served as `relay`. */
async function check(page: Page, voucher: number, relay: Relay) {
  const t = transcript(voucher);
  await page.route(`**/api/vouchers/${voucher}/draw`, (route) => route.fulfill({ json: t }));
  await page.route(`${RELAY}/**`, (route) => {
    if (relay === "down") return route.abort("connectionrefused");
    const randomness = relay === "honest" ? t.randomness : "00".repeat(32);
    return route.fulfill({
      json: { round: 123, randomness, signature: ROUND_123_SIGNATURE },
      headers: { "access-control-allow-origin": "*" },
    });
  });
  await page.goto(`/vouchers/${voucher}/draw`);
}

let voucher = 0;

test.beforeAll(async ({ playwright, baseURL }) => {
  const admin = await playwright.request.newContext({ baseURL });
  await apiSignIn(admin, ADMIN_PHONE);
  voucher = await createDraw(admin, title("Draw checked"), 2, 600);
  await admin.dispose();
});

test("an honest draw reads Verified, its beacon's signature checked in the browser", async ({ page }) => {
  await check(page, voucher, "honest");
  const out = page.getByTestId("draw-check");
  await expect(out).toHaveAttribute("data-state", "verified", { timeout: 20_000 });
  await expect(out).toContainText("Verified");
  await expect(page.getByTestId("draw-check-steps").locator("li.bad, li.unchecked")).toHaveCount(0);
  await noAxeViolations(page);
});

test("a relay serving another randomness for the round is a mismatch, never Verified", async ({ page }) => {
  await check(page, voucher, "lying");
  const out = page.getByTestId("draw-check");
  await expect(out).toHaveAttribute("data-state", "mismatch", { timeout: 20_000 });
  await expect(out).not.toContainText("Verified");
  await expect(page.getByTestId("draw-check-steps").locator("li.bad")).toHaveCount(1);
});

test("a relay out of reach leaves the draw unchecked, not Verified", async ({ page }) => {
  await check(page, voucher, "down");
  const out = page.getByTestId("draw-check");
  await expect(out).toHaveAttribute("data-state", "unchecked", { timeout: 20_000 });
  await expect(out).not.toContainText("Verified");
  await expect(page.getByTestId("draw-check-steps").locator("li.unchecked")).toHaveCount(1);
});

test.describe("in Chinese", () => {
  test.use({ locale: "zh-CN" });

  test("the same checks say so in Chinese, with no English reason", async ({ page }) => {
    await check(page, voucher, "lying");
    const out = page.getByTestId("draw-check");
    await expect(out).toHaveAttribute("data-state", "mismatch", { timeout: 20_000 });
    const said = (await out.textContent()) + (await page.getByTestId("draw-check-steps").textContent());
    // Latin words only among the names the page may show (drand, SHA-256, HMAC-SHA256, hex).
    const latin = (said.match(/[A-Za-z][A-Za-z0-9-]*[A-Za-z0-9]/g) ?? []).filter(
      (w) => !["drand", "SHA-256", "SHA", "HMAC-SHA256", "HMAC", "seed", "leaf"].includes(w),
    );
    expect(latin, said).toEqual([]);
  });
});
