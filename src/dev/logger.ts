/**
 * The little a dev service needs to report progress. A pino logger fits it as it is, and so does
 * `console`; tests pass `silentLogger`.
 */
export interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

export const silentLogger: Logger = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
