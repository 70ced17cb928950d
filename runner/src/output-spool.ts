// Spools one command's whole output to a file in the runner's state directory, hashing the whole
// and each part as it goes, so memory holds one chunk. Uploading the parts is part-uploader.ts's.
import { createHash, type Hash } from "node:crypto";
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { FullOutputBody } from "../../shared/full-output";

/** 16 MiB: a 1 GiB output is 64 parts, and a part re-sent after a crash costs little. */
export const DEFAULT_PART_BYTES = 16 * 1024 * 1024;
export const DEFAULT_MAX_FULL_OUTPUT_BYTES = 1024 * 1024 * 1024;

export const spoolPath = (stateDir: string, sessionId: string): string =>
  join(stateDir, "outputs", `${sessionId}.out`);

export class OutputSpool {
  private fd: number | null;
  private bytes = 0;
  private readonly whole: Hash = createHash("sha256");
  private part: Hash = createHash("sha256");
  private partFill = 0;
  private readonly parts: { bytes: number; sha256: string }[] = [];
  /** Past the bound, or a failed write: there is no full output, only head and tail. */
  private spoiled = false;

  constructor(
    readonly path: string,
    private readonly maxBytes: number,
    private readonly partBytes: number,
  ) {
    mkdirSync(join(path, ".."), { recursive: true, mode: 0o700 });
    this.fd = openSync(path, "w", 0o600);
  }

  append(chunk: Buffer): void {
    if (this.spoiled || this.fd === null) return;
    if (this.bytes + chunk.byteLength > this.maxBytes) {
      this.spoil();
      return;
    }
    try {
      writeSync(this.fd, chunk);
    } catch {
      // A full disk: the command goes on; only its full output is lost.
      this.spoil();
      return;
    }
    this.bytes += chunk.byteLength;
    this.whole.update(chunk);
    let rest = chunk;
    while (rest.byteLength > 0) {
      const take = Math.min(this.partBytes - this.partFill, rest.byteLength);
      this.part.update(rest.subarray(0, take));
      this.partFill += take;
      rest = rest.subarray(take);
      if (this.partFill === this.partBytes) this.closePart();
    }
  }

  /** Ends the spool: what a completion names, or null when there is no whole output to name. */
  finish(): FullOutputBody | null {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    if (this.spoiled || this.bytes === 0) return null;
    if (this.partFill > 0) this.closePart();
    return { bytes: this.bytes, sha256: this.whole.digest("hex"), parts: this.parts };
  }

  private closePart(): void {
    this.parts.push({ bytes: this.partFill, sha256: this.part.digest("hex") });
    this.part = createHash("sha256");
    this.partFill = 0;
  }

  private spoil(): void {
    this.spoiled = true;
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    rmSync(this.path, { force: true });
  }
}

export const removeSpool = (path: string): void => rmSync(path, { force: true });
