// The package's errors. A refusal of the validator component is a CleanupError: the WIT
// `cleanup-error` case (`kind`, with its payload as `detail`) and the component's own
// one-sentence rendering of it (`plans.message`) as `message`, the same sentence every host
// prints. An InputError is a paste the page helpers (inputs.js) cannot cut into JSON texts.

/** A `cleanup-error` returned by the validator component. */
export class CleanupError extends Error {
  /**
   * @param {{ tag: string, val: unknown }} error the WIT variant as the component returned it
   * @param {string} message the component's `plans.message` sentence for it
   * @param {ErrorOptions} [options]
   */
  constructor(error, message, options) {
    super(message, options);
    this.name = 'CleanupError';
    /** The WIT case name, e.g. `invalid-plan` (as `kind` in the CLI's `--json` error object). */
    this.kind = error.tag;
    /** The case's payload: a string, or the case's record (e.g. `{ topic, partition, requested, boundary }`). */
    this.detail = error.val;
    /** The whole variant `{ tag, val }`, e.g. for `message()` or a switch on `error.tag`. */
    this.error = error;
  }
}

/** An operator input the page helpers cannot read; `message` is one sentence naming it. */
export class InputError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'InputError';
  }
}
