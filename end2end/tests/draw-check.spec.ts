import { createHash, createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, Page, test } from "@playwright/test";
import { ADMIN_PHONE, apiSignIn, createDraw, noAxeViolations, title } from "./support";

// "Check this draw" says "Verified" only when every step held, the beacon round included, and
// not once the relay serves another randomness for the round (issue #51). The page of a real
// draw sale is opened; its transcript and the drand relay's answer are served to the browser by
// the journey: a draw made by the rules around drand quicknet's real round 123 (its signature,
// published by drand, verifies against the key the page pins), then the same with the relay
// lying, then with the relay out of reach. The relay's chain info is believed only if it hashes
// to the chain named. An outside witness (an RFC 3161 timestamp of the list and the round, made
// by OpenSSL's TSA under a faked clock: fixtures/draw-witness.json) is checked when published.

const QUICKNET = "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971";
const ROUND_123_SIGNATURE =
  "b75c69d0b72a5d906e854e808ba7e2accb1542ac355ae486d591aa9d43765482e26cd02df835d3546d23c4b13e0dfc92";
const RELAY = "https://relay.example";
const emitted = (round: number) => 1692803367 + (round - 1) * 3;
/** quicknet's `/info` as drand's relays serve it: it hashes to QUICKNET. */
const QUICKNET_INFO = {
  public_key:
    "83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c8c4b450b6a0a6c3ac6a5776a2d1064510d1fec758c921cc22b0e17e63aaf4bcb5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76eae8991ef5ece45a",
  period: 3,
  genesis_time: 1692803367,
  hash: QUICKNET,
  groupHash: "f477d5c89f21a17c863a7f937c6a6d15859414d2be09cd448d4279af331c5d3e",
  schemeID: "bls-unchained-g1-rfc9380",
  metadata: { beaconID: "quicknet" },
};
/** The League of Entropy's default chain: a chain the page does not pin. */
const DEFAULT_CHAIN = "8990e7a9aaed2ffed73dbd7092123d6f289930540d7651336225dc172e51b2ce";

interface Token {
  message: string;
  imprint: string;
  at: string;
  token: string;
}
/** Timestamp tokens over the witness message of sale `voucher`'s transcript (its "about" says how). */
const WITNESS: { voucher: number; tsa: string; tokens: Record<"beforeRound" | "otherRound" | "afterRound", Token> } =
  JSON.parse(readFileSync(path.join(__dirname, "fixtures", "draw-witness.json"), "utf8"));

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
function transcript(voucher: number, extra: Record<string, unknown> = {}) {
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
    ...extra,
  };
}

type Relay = "honest" | "lying" | "down";

/** Opens the draw's check page with its transcript and the relay's answers served as `relay`
 * (its `/info`: `info`). */
async function check(page: Page, voucher: number, relay: Relay, t = transcript(voucher), info: object = QUICKNET_INFO) {
  await page.route(`**/api/vouchers/${voucher}/draw`, (route) => route.fulfill({ json: t }));
  await page.route(`${RELAY}/**`, (route) => {
    if (relay === "down") return route.abort("connectionrefused");
    const headers = { "access-control-allow-origin": "*" };
    if (new URL(route.request().url()).pathname.endsWith("/info")) return route.fulfill({ json: info, headers });
    const randomness = relay === "honest" ? t.randomness : "00".repeat(32);
    return route.fulfill({ json: { round: 123, randomness, signature: ROUND_123_SIGNATURE }, headers });
  });
  await page.goto(`/vouchers/${voucher}/draw`);
}

/** Opens the check page of the witness fixture's sale (its tokens name it): the real draw sale's
 * page, served under the fixture's number, with a transcript witnessed by `token` (`at` its
 * stated time). */
async function checkWitnessed(page: Page, token: Token, relay: Relay = "honest", at = token.at) {
  const fixture = WITNESS.voucher;
  await page.route(
    (url) => url.pathname === `/vouchers/${fixture}/draw`,
    async (route) => {
      const real = await route.fetch({ url: new URL(`/vouchers/${voucher}/draw`, route.request().url()).toString() });
      const html = await real.text();
      const attribute = `data-voucher="${voucher}"`;
      expect(html, "the check page names its sale").toContain(attribute);
      const headers = { ...real.headers() };
      delete headers["content-length"];
      delete headers["content-encoding"];
      delete headers["transfer-encoding"];
      await route.fulfill({ status: real.status(), headers, body: html.replace(attribute, `data-voucher="${fixture}"`) });
    },
  );
  const t = transcript(fixture, { witness: { tsa: WITNESS.tsa, at, token: token.token } });
  // The fixture's tokens are over this transcript's list (a change to `transcript` needs new ones).
  expect(WITNESS.tokens.beforeRound.message).toBe(`seckill-draw-witness-v1:${fixture}:${t.entries_root}:123`);
  await check(page, fixture, relay, t);
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
  // No outside timestamp published: said, and it does not stand in the way.
  await expect(page.getByTestId("draw-check-steps").locator("li.neutral")).toHaveText(
    "○ no outside timestamp: the close's time is the shop's word",
  );
  await noAxeViolations(page);
});

test("a draw timestamped outside the shop before its round reads Verified, with the command that checks the authority", async ({
  page,
}) => {
  const token = WITNESS.tokens.beforeRound;
  await checkWitnessed(page, token);
  const out = page.getByTestId("draw-check");
  await expect(out).toHaveAttribute("data-state", "verified", { timeout: 20_000 });
  const steps = page.getByTestId("draw-check-steps");
  await expect(steps.locator("li.bad, li.unchecked, li.neutral")).toHaveCount(0);
  const step = steps.locator("li", { hasText: "timestamped by" });
  await expect(step).toContainText(
    `timestamped by ${WITNESS.tsa} at 2023-08-23T15:10:00Z, before round 123 was emitted (2023-08-23T15:15:33Z)`,
  );
  await expect(step).toContainText("signature is not checked in this browser");
  await expect(step.locator("code").last()).toHaveText(
    `echo ${token.token} | xxd -r -p > token.der && openssl ts -verify -digest ${token.imprint} -in token.der -token_in -CAfile <the authority's certificate>`,
  );
  await noAxeViolations(page);
});

/** Witnesses that do not hold: what is wrong, the token, the time the transcript states (else the
 * token's), what the page says. */
const untrue: [string, Token, string | undefined, RegExp][] = [
  [
    "a time other than its token's",
    WITNESS.tokens.beforeRound,
    "2023-08-23T15:10:01Z",
    /token says 2023-08-23T15:10:00Z, the transcript 2023-08-23T15:10:01Z/,
  ],
  ["a token over another round", WITNESS.tokens.otherRound, undefined, /covers another list or round/],
  ["a token made once the round was emitted", WITNESS.tokens.afterRound, undefined, /is not before round 123 was emitted/],
];
for (const [what, token, at, said] of untrue) {
  test(`a witness with ${what} is a mismatch, never Verified`, async ({ page }) => {
    await checkWitnessed(page, token, "honest", at);
    const out = page.getByTestId("draw-check");
    await expect(out).toHaveAttribute("data-state", "mismatch", { timeout: 20_000 });
    await expect(out).not.toContainText("Verified");
    await expect(out).toContainText(said);
    await expect(page.getByTestId("draw-check-steps").locator("li.bad")).toHaveCount(1);
  });
}

test("a relay whose chain info hashes to another chain than the one named is refused", async ({ page }) => {
  // The transcript names a chain the page does not pin; the relay states that hash, but its info
  // (quicknet's key, clock and group) hashes to quicknet.
  const t = transcript(voucher, { beacon: { url: RELAY, chain_hash: DEFAULT_CHAIN, round: 123 } });
  await check(page, voucher, "honest", t, { ...QUICKNET_INFO, hash: DEFAULT_CHAIN });
  const out = page.getByTestId("draw-check");
  await expect(out).toHaveAttribute("data-state", "mismatch", { timeout: 20_000 });
  await expect(out).toContainText("another chain");
  await expect(page.getByTestId("draw-check-steps").locator("li.bad")).toHaveCount(1);
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

  test("the witness step says so in Chinese", async ({ page }) => {
    await checkWitnessed(page, WITNESS.tokens.beforeRound, "lying");
    const out = page.getByTestId("draw-check");
    await expect(out).toHaveAttribute("data-state", "mismatch", { timeout: 20_000 });
    const steps = page.getByTestId("draw-check-steps");
    await expect(steps.locator("li.ok", { hasText: "加盖时间戳" })).toContainText("早于第123轮产生的时间");
    // Latin words only in code (the authority, the times, the command) and the names allowed.
    const said = await steps.evaluate((ul) => {
      const copy = ul.cloneNode(true) as HTMLElement;
      copy.querySelectorAll("code").forEach((c) => c.remove());
      return copy.textContent ?? "";
    });
    const latin = (said.match(/[A-Za-z][A-Za-z0-9-]*[A-Za-z0-9]/g) ?? []).filter(
      (w) => !["drand", "SHA-256", "SHA", "HMAC-SHA256", "HMAC", "seed", "leaf"].includes(w),
    );
    expect(latin, said).toEqual([]);
  });
});
