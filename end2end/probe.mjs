import { chromium } from "@playwright/test";
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
const ctx = await browser.newContext({ baseURL: "http://127.0.0.1:3918", viewport: { width: 360, height: 740 } });
const page = await ctx.newPage();
page.on("console", (m) => { if (m.type() === "error" || m.type() === "warning") console.log("console:", m.type(), m.text().slice(0, 300)); });
page.on("pageerror", (e) => console.log("pageerror:", String(e).slice(0, 300)));
const r = await ctx.request.post("/api/login/code", { data: { phone: "13800000000" } });
const { code } = await r.json();
await ctx.request.post("/api/login", { data: { phone: "13800000000", code } });
await page.goto(process.argv[2] ?? "/admin");
await page.waitForTimeout(1500);
const wide = await page.evaluate(() => {
  const out = [];
  for (const el of document.querySelectorAll("body *")) {
    const r = el.getBoundingClientRect();
    if (r.right > 365) out.push(`${el.tagName}.${el.className} ${Math.round(r.left)}-${Math.round(r.right)}`);
  }
  return [document.documentElement.scrollWidth, out.slice(0, 15)];
});
console.log(JSON.stringify(wide, null, 1));
await page.screenshot({ path: "/tmp/probe.png", fullPage: true });
await browser.close();
