// The pinned viewer of /docs: its version and the path it is served at. Kept apart from the page
// (which needs the Worker's bindings) so the browser test can read it too.

/** The installed `@scalar/api-reference` (package.json pins it exactly); a browser test checks it. */
export const SCALAR_VERSION = "1.76.0";
/** Versioned, so a new release is a new URL and the old one may be cached for good. */
export const SCALAR_SCRIPT_PATH = `/docs/scalar-${SCALAR_VERSION}.js`;
