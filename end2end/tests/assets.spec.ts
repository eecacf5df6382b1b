import { expect, test } from "@playwright/test";
import { ADMIN_PHONE, apiSignIn, createVoucher, hydrated, title, uiSignIn } from "./support";

test("static files go out precompressed under hashed names, immutable, and a cold page load stays light", async ({ browser, request }) => {
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

  // First visits of the home page and of a sale page, each in a new browser: every byte over
  // the wire (headers and encoded bodies), and the static part (the HTML grows with what is
  // listed; the wasm, its glue and the CSS do not). Shoppers' pages load the shoppers' bundle,
  // never the admin pages' (issue #34).
  await apiSignIn(request, ADMIN_PHONE);
  const sale = await createVoucher(request, { title: title("Weighed"), stock: 5, beginsInSec: -60 });
  for (const path of ["/", `/vouchers/${sale}`]) {
    const context = await browser.newContext();
    const cold = await context.newPage();
    let bytes = 0;
    let assets = 0;
    const files: string[] = [];
    cold.on("requestfinished", async (r) => {
      const s = await r.sizes();
      bytes += s.responseHeadersSize + s.responseBodySize;
      const { pathname } = new URL(r.url());
      if (pathname.startsWith("/pkg/")) {
        assets += s.responseHeadersSize + s.responseBodySize;
        files.push(pathname);
      }
    });
    await cold.goto(path);
    await expect(cold.getByTestId("site-header")).toHaveAttribute("data-hydrated", "true");
    await cold.waitForLoadState("networkidle");
    await cold.waitForTimeout(200);
    console.log(`cold page weight of ${path} over the wire: ${bytes} bytes, of which static files ${assets}`);
    expect(files.some((f) => f.includes("seckill-admin")), files.join(" ")).toBe(false);
    expect(files.filter((f) => /\/seckill\.[0-9a-f]{16}\.wasm$/.test(f)), files.join(" ")).toHaveLength(1);
    // Islands (issue #34) took it from 501 KB to 250 KB, a standard library built with the
    // bundle, whose panics abort without a message, to 232 KB, and islands calling the REST API
    // instead of server functions and reading without serde's buffers or chrono's parser to
    // 183 KB, and the home page's list from the server to 180 KB: the shoppers' islands and
    // Leptos's runtime (BENCHMARKS.md "Islands"). The 150 KB is not met; this bound
    // catches a regression past today's weight.
    expect(assets).toBeGreaterThan(0);
    expect(assets).toBeLessThan(185_000);
    await context.close();
  }
});

test("the admin pages load the admin bundle, and only it", async ({ page }) => {
  await uiSignIn(page, ADMIN_PHONE);
  const wasm: string[] = [];
  page.on("requestfinished", (r) => {
    const { pathname } = new URL(r.url());
    if (pathname.endsWith(".wasm")) wasm.push(pathname);
  });
  await page.goto("/admin");
  await hydrated(page);
  await page.waitForLoadState("networkidle");
  expect(wasm, wasm.join(" ")).toHaveLength(1);
  expect(wasm[0]).toMatch(/^\/pkg\/seckill-admin\.[0-9a-f]{16}\.wasm$/);
  // The console's own island is live: its figures refresh by themselves (every 2 s).
  const refreshed = page.waitForRequest((r) => new URL(r.url()).pathname.startsWith("/sf/console"));
  await refreshed;
});
