/** A start-up failure (database, data folder, listen address) the command line reports as one line, exit 1, never a stack trace. */
export class StartupError extends Error {}
