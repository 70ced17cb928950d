// The few Node APIs the Worker uses, which workerd provides under the `nodejs_compat` flag
// (wrangler.toml). Declared here by hand instead of @types/node, so any other Node API
// (process.argv, node:fs, …) fails to compile in Worker code. Add a member only for an API workerd implements.

type BufferEncoding = "utf8" | "base64" | "base64url" | "hex";

declare class Buffer extends Uint8Array {
  static from(text: string, encoding?: BufferEncoding): Buffer;
  static from(bytes: Uint8Array): Buffer;
  toString(encoding?: BufferEncoding): string;
}

declare module "node:crypto" {
  interface Digestible {
    update(data: string | Uint8Array): this;
    digest(): Buffer;
    digest(encoding: BufferEncoding): string;
  }
  export function createHash(algorithm: "sha256"): Digestible;
  export function createHmac(algorithm: "sha256", key: string | Uint8Array): Digestible;
  export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean;
}
