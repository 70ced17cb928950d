// The one icon every page of this origin links to (front door, console, reference), served from
// here so no page load asks for a missing /favicon.ico. Which pages link it is left to them.
export const FAVICON_PATH = "/favicon.svg";

/** An inbox tray on the console's header blue. */
const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#16202e"/><path d="M7 17h5l2 3h4l2-3h5v7H7z" fill="#fff"/><path d="M9 9h14l2 8h-5l-2 3h-4l-2-3H7z" fill="none" stroke="#8fb0ff" stroke-width="2" stroke-linejoin="round"/></svg>`;

export function favicon(): Response {
  return new Response(FAVICON_SVG, {
    headers: {
      "content-type": "image/svg+xml",
      "cache-control": "public, max-age=86400",
      "x-content-type-options": "nosniff",
      // An SVG opened by itself is a document: it may run nothing.
      "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
    },
  });
}
