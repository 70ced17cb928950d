// Before any browser test: find or install Chromium, so a missing browser fails the run loudly.
import { ensureChromium } from "../support/ensure-chromium";

export default function setup(): void {
  ensureChromium();
}
