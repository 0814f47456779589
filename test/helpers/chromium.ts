/**
 * Headless Chromium for the browser tests (Debian's /usr/bin/chromium driven by playwright-core):
 * the executable, its flags and a launcher. Without Chromium the tests fail (CI installs it).
 */
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
// as the machine notes' probe starts it; the background-networking flags keep Chromium from calling home
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export const MISSING_CHROMIUM =
  `no Chromium at ${CHROMIUM}: ` + "install Debian's (apt-get update && apt-get install -y chromium; .ci/run does)";

/** Chromium launched headless, or undefined when it is not installed (the caller fails with MISSING_CHROMIUM). */
export async function launchChromium(): Promise<Browser | undefined> {
  return existsSync(CHROMIUM) ? chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }) : undefined;
}
