/**
 * The `versionNotification` workflow's input and keys (decisions §12): one run per announced
 * version, which continues as new every CONTINUE_AFTER recipients with where it got to.
 */

export interface VersionNotificationInput {
  notificationId: string;
  /** The last purchase id done by an earlier run of the chain; null at the start. */
  after: string | null;
}

/** Recipients read per step; one activity sends them one by one at the organisation's rate. */
export const NOTICE_BATCH = 50;

/** A run hands over to a new one after this many recipients, so its history stays small. */
export const CONTINUE_AFTER = 2000;
