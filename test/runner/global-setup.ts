// Before any runner or end-to-end test: find or install bubblewrap, so the sandbox the runner
// defaults to is the one tested, and a missing one fails the run loudly.
import { ensureBwrap } from "../support/ensure-bwrap";

export default function setup(): void {
  ensureBwrap();
}
