import { expect, test } from "@playwright/test";

test("static files go out precompressed under hashed names, immutable, and a cold page load stays light", async ({ page, request }) => {
  // The page names the release build's hashed files; each also answers under its plain name.
  const html = await (await request.get("/")).text();
  const named = [...html.matchAll(/\/pkg\/[^"' )]+/g)].map((m) => m[0]);
  const hashed = [...new Set(named)].filter((f) => /^\/pkg\/seckill\.[0-9a-f]{16}\.(js|wasm|css)$/.test(f));
  expect(hashed.length, named.join(" ")).toBe(3);

  for (const file of hashed) {
    const br = await request.get(file, { headers: { "Accept-Encoding": "br" } });
    expect(br.status(), file).toBe(200);
    expect(br.headers()["content-encoding"], file).toBe("br");
    expect(br.headers()["cache-control"], file).toBe("public, max-age=31536000, immutable");
    expect(br.headers()["vary"] ?? "", file).toMatch(/accept-encoding/i);
    const gz = await request.get(file, { headers: { "Accept-Encoding": "gzip" } });
    expect(gz.headers()["content-encoding"], file).toBe("gzip");
  }
  for (const file of ["/pkg/seckill.wasm", "/pkg/seckill.js", "/pkg/seckill.css"]) {
    const br = await request.get(file, { headers: { "Accept-Encoding": "br" } });
    expect(br.status(), file).toBe(200);
    expect(br.headers()["cache-control"], file).toBe("no-cache");
    // Unchanged since the browser's copy: 304, no body.
    const again = await request.get(file, {
      headers: { "Accept-Encoding": "br", "If-Modified-Since": br.headers()["last-modified"] },
    });
    expect(again.status(), file).toBe(304);
  }

  // A first visit: every byte over the wire (headers and encoded bodies), and the static part
  // (the HTML grows with the vouchers listed; the wasm, its glue and the CSS do not).
  let bytes = 0;
  let assets = 0;
  page.on("requestfinished", async (r) => {
    const s = await r.sizes();
    bytes += s.responseHeadersSize + s.responseBodySize;
    if (new URL(r.url()).pathname.startsWith("/pkg/")) assets += s.responseHeadersSize + s.responseBodySize;
  });
  await page.goto("/");
  await expect(page.getByTestId("site-header")).toHaveAttribute("data-hydrated", "true");
  await page.waitForLoadState("networkidle");
  await page.waitForTimeout(200);
  console.log(`cold page weight of / over the wire: ${bytes} bytes, of which static files ${assets}`);
  // The whole app hydrates on every page: 1.84 MB raw, 501 KB over the wire since the draw's
  // panel and calls (issue #33, +24 KB). Islands (issue #34) are what brings it under 150 KB; until
  // then this bound only catches a regression beyond that.
  expect(assets).toBeGreaterThan(0);
  expect(assets).toBeLessThan(515_000);
});
