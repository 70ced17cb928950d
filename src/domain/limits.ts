// Size limits that keep every answer and every row bounded, whatever the history.
// Checking request bodies against them is left to the HTTP layer; paging rows to the store.

/** A message's JSON (role, content, metadata) above this is refused with 413; rows cap at 2 MB. */
export const MAX_MESSAGE_BYTES = 1024 * 1024;
/** Session metadata is in every view; above this it is refused with 413. */
export const MAX_SESSION_METADATA_BYTES = 64 * 1024;
/** A message page stops before this many bytes of messages (always at least one message). */
export const MESSAGE_PAGE_MAX_BYTES = 768 * 1024;
/** A job-summary page stops before this many bytes (a summary is at most about 9 KiB). */
export const JOB_PAGE_MAX_BYTES = 512 * 1024;
/**
 * One claim answer carries at most this many bytes of claims (always at least one claim): 128
 * envelopes of 64 KiB with their provider messages would be about 9 MiB. The rest stays pending
 * for the next claim.
 */
export const CLAIM_ANSWER_MAX_BYTES = 768 * 1024;
