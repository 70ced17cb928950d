// The console as a browser reaches it inside the workers pool: sign-in for a session cookie, form
// POSTs (redirects not followed) and page reads. What a test checks of the answers is its own.
import { exports } from "cloudflare:workers";
import { OPERATOR_TOKEN } from "./secrets";

export const ORIGIN = "http://exec-inbox.test";

/** The client address sign-in throttling counts; give each test its own to keep counts apart. */
export const DEFAULT_CLIENT = "192.0.2.1";

/** A browser's form POST from a console page of this origin; the redirect is the answer. */
export const postForm = (
  path: string,
  form: Record<string, string>,
  options: { cookie?: string; client?: string; origin?: string } = {},
) =>
  exports.default.fetch(
    new Request(`${options.origin ?? ORIGIN}${path}`, {
      method: "POST",
      redirect: "manual",
      body: new URLSearchParams(form),
      headers: {
        origin: options.origin ?? ORIGIN,
        cookie: options.cookie ?? "",
        "cf-connecting-ip": options.client ?? DEFAULT_CLIENT,
      },
    }),
  );

/** The `name=value` of an answer's Set-Cookie ("" when none). */
export const cookieOf = (answer: Response): string =>
  (answer.headers.get("set-cookie") ?? "").split(";")[0] ?? "";

/** Signs in as a browser does and returns the `Cookie` header of that new console session. */
export async function signedInCookie(client = DEFAULT_CLIENT): Promise<string> {
  const answer = await postForm("/console/sign-in", { token: OPERATOR_TOKEN }, { client });
  if (answer.status !== 303) throw new Error(`sign-in answered ${answer.status}`);
  return cookieOf(answer);
}

/** A GET as a browser with `cookie` sends it. */
export const getPage = (path: string, cookie: string, headers: Record<string, string> = {}) =>
  exports.default.fetch(
    new Request(`${ORIGIN}${path}`, { redirect: "manual", headers: { cookie, ...headers } }),
  );

export const formTokenOf = (html: string): string =>
  /name="form_token" value="([^"]+)"/.exec(html)?.[1] ?? "";
