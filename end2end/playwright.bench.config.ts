import { defineConfig } from "@playwright/test";
import base from "./playwright.config";

// Measurements, not tests (scripts/bench.sh phone): the same browser, one worker, no retries.
export default defineConfig({
  ...base,
  testDir: "./bench",
  timeout: 300_000,
});
