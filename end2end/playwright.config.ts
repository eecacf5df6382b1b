import { defineConfig } from "@playwright/test";

// Debian's chromium, never a downloaded browser; the flags keep it off the (closed) network.
const chromium = {
  executablePath: "/usr/bin/chromium",
  args: [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
};

export default defineConfig({
  testDir: "./tests",
  timeout: 30_000,
  fullyParallel: false,
  workers: 1,
  reporter: [["list"]],
  use: {
    baseURL: process.env.BASE_URL ?? "http://127.0.0.1:3000",
    launchOptions: chromium,
    screenshot: "only-on-failure",
  },
  outputDir: "test-results",
});
